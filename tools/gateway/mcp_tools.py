"""`listModels`, `routeCompletion` and the `models/list` extension method, over a GatewayService.

A gateway failure is a tool error (`isError: true`) whose text is `{"error": {"code", "message",
"data"}}` with the design's code (-32001..-32007) and `data` = kind, upstream status, attempts; the same
object sits in `_meta["io.hexmcp/error"]`. `models/list` answers the same failures as JSON-RPC errors
with those codes. With a progress token, routeCompletion streams the completion's text as progress
notifications (`message` = the new text, `progress` = characters so far); the result is whole either way.
"""

# No `from __future__ import annotations`: Python 3.11's TypedDict does not see `NotRequired` in a string
# annotation, so the result types' optional keys would be listed as required.

import asyncio
from typing import Annotated, Any, Callable, Literal, NotRequired, TypedDict

import structlog

from hexmcp.core import ErrorCode, McpServer, ProtocolError, ToolContext, models
from hexmcp.core.meta import META_ERROR_CODE, META_EVENT_ID
from hexmcp.core.registrar import Registrar
from hexmcp.core.schemas.from_types import schema_for
from hexmcp.core.tools import json_text

from .completers import completer
from .port import ChatGateway, GatewayFailure
from .prompts import DocumentsFn, register_prompts
from .resources import ModelResources
from .routing_source import RoutingSource
from .service import GatewayService, GatewaySettings

log = structlog.get_logger("hexmcp.gateway")

MAX_PROMPT_CHARS = 20_000  # the classifier reads at most this much (ClassificationConfig.max_text_chars)
ERROR_META = "io.hexmcp/error"

# What the tools answer. A gateway failure answers `failure_result` instead, so each tool's return type is
# a union and its output schema is named (`schema_for(...)`) rather than read from the return type.


class ListedModel(TypedDict):
    id: str
    provider: str
    capabilities: dict  # categories routed to it, reasoning, served...: CatalogueEntry.wire()


class ModelList(TypedDict):
    models: list[ListedModel]


class Routing(TypedDict):
    category: str | None
    confidence: float | None
    model: str
    modelSource: NotRequired[Literal["caller", "routing", "policy", "default"]]
    reasoning: bool
    reasoningEffort: NotRequired[str | None]


class TokenUsage(TypedDict):
    promptTokens: int
    completionTokens: int
    totalTokens: int


class LatencyMs(TypedDict, total=False):
    total: float
    classification: float
    gateway: float


class RoutedCompletionResult(TypedDict):
    completion: str
    routing: Routing
    model: NotRequired[Annotated[str, "the model the gateway says answered"]]
    finishReason: NotRequired[str | None]
    usage: TokenUsage
    latencyMs: LatencyMs
    attempts: NotRequired[Annotated[int, {"minimum": 1}]]


def failure_result(failure: GatewayFailure) -> models.CallToolResult:
    """The tool error for a gateway failure, naming its eventId as the core's tool failures do: the id of the
    line the gateway client logged about it, or of the line logged here for one that made no call."""
    if failure.attempts == 0:  # refused before any call (no gateway configured): nothing logged it yet
        log.warning("gateway tool failed", kind=failure.kind.name.lower(), code=failure.code, reason=failure.message,
                    eventId=failure.event_id)
    error = {"code": failure.code, "message": failure.message, "data": {**failure.data(), "eventId": failure.event_id}}
    return models.CallToolResult(content=[models.TextContent(text=json_text({"error": error}))], is_error=True,
                                 meta={ERROR_META: error, META_ERROR_CODE: failure.kind.error_code.value,
                                       META_EVENT_ID: failure.event_id})


class GatewayTools:
    """What the composition root keeps: the service, start-up and refresh work, and /health's view."""

    def __init__(self, server: McpServer, service: GatewayService, refresh_s: float) -> None:
        self.server = server
        self.service = service
        self.refresh_s = refresh_s
        self.resources = ModelResources(server, service)

    async def start(self) -> None:
        """The design's "gateway connection" step: one models request, logged with its latency; a failure
        is a warning (the gateway may come up later), never a reason to stop."""
        if self.service.gateway is None:
            log.info("no gateway configured: routeCompletion and listModels will answer -32005")
            await self._sync()
            return
        failure = await self.service.refresh()
        if failure is None:
            log.info("gateway connection", state="ok", latency_ms=self.service.last_check_ms,
                     models=len(self.service.served or ()))
        else:
            log.warning("gateway connection", state="unreachable", latency_ms=self.service.last_check_ms,
                        code=failure.code, reason=failure.message)
        await self._sync()

    async def watch(self, stop: asyncio.Event | None = None) -> None:
        """Re-read the gateway's models list every refresh_s; announce changes as resource notifications."""
        if self.service.gateway is None:
            return
        stop = stop or asyncio.Event()
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), self.refresh_s)
                return
            except TimeoutError:
                pass
            try:
                await self.service.refresh()  # failures are values; this guards against bugs only
            except Exception:
                log.exception("refreshing the models list failed")
            await self._sync()

    async def _sync(self) -> None:
        """Publish the catalogue; a failure here is logged, never allowed to end the start-up hooks
        (an adapter stops the server when one of them raises)."""
        try:
            await self.resources.sync()
        except Exception:
            log.exception("publishing the model catalogue failed")

    def describe(self) -> dict[str, Any]:
        return self.service.describe()


def register_gateway_tools(server: McpServer, gateway: ChatGateway | None, routing: RoutingSource | None,
                           settings: GatewaySettings, *, refresh_s: float = 60.0, documents: DocumentsFn | None = None,
                           document_uri: Callable[[str], str] | None = None) -> GatewayTools:
    service = GatewayService(gateway, routing, settings)
    tools = GatewayTools(server, service, refresh_s)
    registrar = Registrar(server)

    async def model_ids() -> list[str]:
        return [entry.id for entry in await service.entries()]

    async def category_names() -> list[str]:
        return [c.name for c in await routing.categories()] if routing is not None else []

    tools.resources.register(registrar, completer({"model": model_ids}), completer({"category": category_names}))
    register_prompts(registrar, routing, category_names, model_ids, documents, document_uri)
    _register_list_models(registrar, tools)
    _register_route_completion(registrar, service)
    _add_models_list_method(server, service)
    return tools


def _register_list_models(registrar: Registrar, tools: GatewayTools) -> None:
    @registrar.tool("listModels", title="List models", output_schema=schema_for(ModelList),
                    description="The models the routing policy can choose, with provider and capabilities "
                                "(categories routed to each, reasoning, whether the gateway serves it).",
                    annotations=models.ToolAnnotations(read_only_hint=True, open_world_hint=True),
                    schemas_checked_in_tests=True)
    async def list_models() -> ModelList | models.CallToolResult:
        catalogue = await tools.service.catalogue()
        if isinstance(catalogue, GatewayFailure):
            return failure_result(catalogue)
        await tools.resources.sync()
        return {"models": [entry.wire() for entry in catalogue]}


def _register_route_completion(registrar: Registrar, service: GatewayService) -> None:
    # A completion can take tens of seconds: long_running makes it a task for clients that can poll.
    # Its result is built from an answer whose every field the client checked as it read it (the rest is
    # the routing's, typed when the taxonomy and the configuration load): a property test holds that it
    # fits the output schema, in place of a check on every call (ADR 1206).
    @registrar.tool("routeCompletion", title="Routed completion", output_schema=schema_for(RoutedCompletionResult),
                    description="Classify the prompt, add its category's system prompt, pick the model and "
                                "reasoning by the routing policy (or use `model`), and return the gateway's "
                                "completion with the routing decision, token usage and latency. With a progress "
                                "token the text streams as progress notifications.",
                    annotations=models.ToolAnnotations(read_only_hint=False, open_world_hint=True),
                    schemas_checked_in_tests=True, output_checked_in_tests=True, long_running=True)
    async def route_completion(  # noqa: N803 (the arguments' wire names are camelCase)
        prompt: Annotated[str, "The user prompt.", {"minLength": 1, "maxLength": MAX_PROMPT_CHARS}],
        # None: not given. The hints name no None, so the schema takes no null (as it never has).
        model: Annotated[str, "Call this model instead of the one the routing policy picks.",
                         {"minLength": 1}] = None,
        maxTokens: Annotated[int, "Upper bound on the completion's tokens.",
                             {"minimum": 1, "maximum": 1_000_000}] = None,
        system: Annotated[str, "A system prompt replacing the category's."] = None,
        *, ctx: ToolContext,
    ) -> RoutedCompletionResult | models.CallToolResult:
        if not prompt.strip():
            raise ProtocolError(ErrorCode.INVALID_PARAMS, "Invalid arguments for tool 'routeCompletion': argument "
                                "prompt must not be empty or whitespace only", {"path": "$.arguments.prompt"})
        refused = await service.refusal(model, maxTokens)
        if refused is not None:
            raise ProtocolError(ErrorCode.INVALID_PARAMS, f"Invalid arguments for tool 'routeCompletion': {refused}",
                                {"path": "$.arguments.maxTokens" if refused.startswith("maxTokens")
                                 else "$.arguments.model"})
        streamed = 0

        async def on_text(piece: str) -> None:
            nonlocal streamed
            streamed += len(piece)
            await ctx.report_progress(streamed, message=piece)

        outcome = await service.route_completion(prompt, model=model, max_tokens=maxTokens, system=system,
                                                 on_text=on_text if ctx.wants_progress else None,
                                                 client=ctx.session_id)
        if isinstance(outcome, GatewayFailure):
            return failure_result(outcome)
        return outcome.wire()


def _add_models_list_method(server: McpServer, service: GatewayService) -> None:
    async def models_list(params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        catalogue = await service.catalogue()
        if isinstance(catalogue, GatewayFailure):
            raise ProtocolError(catalogue.kind.error_code, catalogue.message, catalogue.data())
        return {"models": [entry.wire() for entry in catalogue]}

    server.add_method("models/list", models_list, capability={"description": "the models the routing can choose"})
