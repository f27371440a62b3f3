"""`listModels`, `routeCompletion` and the `models/list` extension method, over a GatewayService.

A gateway failure is a tool error (`isError: true`) whose text is `{"error": {"code", "message",
"data"}}` with the design's code (-32001..-32007) and `data` = kind, upstream status, attempts; the same
object sits in `_meta["io.hexmcp/error"]`. `models/list` answers the same failures as JSON-RPC errors
with those codes. With a progress token, routeCompletion streams the completion's text as progress
notifications (`message` = the new text, `progress` = characters so far); the result is whole either way.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import structlog

from hexmcp.core import ErrorCode, McpServer, ProtocolError, ToolContext, models
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

ROUTE_INPUT = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "minLength": 1, "maxLength": MAX_PROMPT_CHARS, "description": "The user prompt."},
        "model": {"type": "string", "minLength": 1,
                  "description": "Call this model instead of the one the routing policy picks."},
        "maxTokens": {"type": "integer", "minimum": 1, "maximum": 1_000_000,
                      "description": "Upper bound on the completion's tokens."},
        "system": {"type": "string", "description": "A system prompt replacing the category's."},
    },
    "required": ["prompt"],
}
ROUTE_OUTPUT = {
    "type": "object",
    "properties": {
        "completion": {"type": "string"},
        "routing": {"type": "object", "properties": {
            "category": {"type": ["string", "null"]}, "confidence": {"type": ["number", "null"]},
            "model": {"type": "string"}, "modelSource": {"enum": ["caller", "routing", "policy", "default"]},
            "reasoning": {"type": "boolean"}, "reasoningEffort": {"type": ["string", "null"]}},
            "required": ["category", "confidence", "model", "reasoning"]},
        "model": {"type": "string", "description": "the model the gateway says answered"},
        "finishReason": {"type": ["string", "null"]},
        "usage": {"type": "object", "properties": {"promptTokens": {"type": "integer"},
                                                   "completionTokens": {"type": "integer"},
                                                   "totalTokens": {"type": "integer"}},
                  "required": ["promptTokens", "completionTokens", "totalTokens"]},
        "latencyMs": {"type": "object", "properties": {"total": {"type": "number"},
                                                       "classification": {"type": "number"},
                                                       "gateway": {"type": "number"}}},
        "attempts": {"type": "integer", "minimum": 1},
    },
    "required": ["completion", "routing", "usage", "latencyMs"],
}
MODELS_OUTPUT = {
    "type": "object",
    "properties": {"models": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "string"}, "provider": {"type": "string"}, "capabilities": {"type": "object"}},
        "required": ["id", "provider", "capabilities"]}}},
    "required": ["models"],
}


def failure_result(failure: GatewayFailure) -> models.CallToolResult:
    error = {"code": failure.code, "message": failure.message, "data": failure.data()}
    return models.CallToolResult(content=[models.TextContent(text=json_text({"error": error}))], is_error=True,
                                 meta={ERROR_META: error, "io.hexmcp/errorCode": failure.kind.error_code.value})


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

    async def model_ids() -> list[str]:
        return [entry.id for entry in await service.entries()]

    async def category_names() -> list[str]:
        return [c.name for c in await routing.categories()] if routing is not None else []

    tools.resources.register(completer({"model": model_ids}), completer({"category": category_names}))
    register_prompts(server, service, category_names, model_ids, documents, document_uri)

    async def list_models(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        catalogue = await service.catalogue()
        if isinstance(catalogue, GatewayFailure):
            return failure_result(catalogue)
        await tools.resources.sync()
        return {"models": [entry.wire() for entry in catalogue]}

    async def route_completion(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        prompt = arguments["prompt"]
        if not prompt.strip():
            raise ProtocolError(ErrorCode.INVALID_PARAMS, "Invalid arguments for tool 'routeCompletion': argument "
                                "prompt must not be empty or whitespace only", {"path": "$.arguments.prompt"})
        streamed = 0

        async def on_text(piece: str) -> None:
            nonlocal streamed
            streamed += len(piece)
            await ctx.report_progress(streamed, message=piece)

        outcome = await service.route_completion(prompt, model=arguments.get("model"),
                                                 max_tokens=arguments.get("maxTokens"), system=arguments.get("system"),
                                                 on_text=on_text if ctx.wants_progress else None,
                                                 client=ctx.session_id)
        if isinstance(outcome, GatewayFailure):
            return failure_result(outcome)
        return outcome.wire()

    async def models_list(params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        catalogue = await service.catalogue()
        if isinstance(catalogue, GatewayFailure):
            raise ProtocolError(catalogue.kind.error_code, catalogue.message, catalogue.data())
        return {"models": [entry.wire() for entry in catalogue]}

    server.tools.add("listModels", list_models, title="List models",
                     description="The models the routing policy can choose, with provider and capabilities "
                                 "(categories routed to each, reasoning, whether the gateway serves it).",
                     input_schema={"type": "object", "properties": {}}, output_schema=MODELS_OUTPUT,
                     annotations=models.ToolAnnotations(read_only_hint=True, open_world_hint=True),
                     schemas_checked_in_tests=True)
    server.tools.add("routeCompletion", route_completion, title="Routed completion",
                     description="Classify the prompt, add its category's system prompt, pick the model and "
                                 "reasoning by the routing policy (or use `model`), and return the gateway's "
                                 "completion with the routing decision, token usage and latency. With a progress "
                                 "token the text streams as progress notifications.",
                     input_schema=ROUTE_INPUT, output_schema=ROUTE_OUTPUT,
                     annotations=models.ToolAnnotations(read_only_hint=False, open_world_hint=True),
                     schemas_checked_in_tests=True,
                     long_running=True)  # a completion can take tens of seconds: a task for clients that can poll
    server.add_method("models/list", models_list, capability={"description": "the models the routing can choose"})
    return tools

