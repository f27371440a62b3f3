"""One connection's view of the server: lifecycle, negotiated version, and request dispatch.

`handle_request` and `handle_notification` are the whole interface an adapter needs. They take a
method name and params (already decoded JSON) and return values: `Ok(result)` with the result shaped
for the request's protocol version, or a `Rejection`. Nothing here knows JSON-RPC, ids or framing.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Awaitable, Callable

import attrs
import structlog

from . import lifecycle, models, versions
from .context import InputNeeded, ToolContext
from .convert import to_wire
from .errors import ErrorCode, ProtocolError, Rejection, ToolError
from .ids import new_event_id
from .pagination import page
from .params import (CallToolParams, CancelledParams, CompleteParams, GetPromptParams, InitializeParams,
                     ListenParams, NoParams, PaginatedParams, ResourceParams, SetLevelParams, parse_params)
from .ports import Peer, RequestKey
from .tools import OutputSchemaViolation, to_call_result

if TYPE_CHECKING:
    from .server import McpServer

log = structlog.get_logger("hexmcp.core")

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"


@attrs.frozen
class Ok:
    result: dict[str, Any]


Outcome = Ok | Rejection


@attrs.frozen(kw_only=True)
class Call:
    """Everything about one request that is not its params."""

    version: str
    request_key: RequestKey | None
    trace_id: str
    client_capabilities: dict[str, Any]
    progress_token: str | int | None
    log_level: str | None


Handler = Callable[["Session", Any, Call], Awaitable[Any]]


@attrs.define(eq=False)
class _InFlight:
    """A request admitted and not yet answered.

    Registered at admission, synchronously, so a `notifications/cancelled` that arrives right behind
    its request always finds it, even before the request's task has run.
    """

    task: asyncio.Task[Any] | None = None
    """The task running the request's cancellable work (`run_cancellable`), while it runs."""
    cancelled: bool = False
    """The client cancelled it: work not yet started never starts, work running is stopped."""


@attrs.frozen(kw_only=True)
class Route:
    handler: Handler
    params: type
    handshake: bool = True  # served on handshake versions
    stateless: bool = True  # served on 2026-07-28


class Session:
    def __init__(self, server: McpServer, *, session_id: str, peer: Peer, assume_version: str | None) -> None:
        self.server = server
        self.session_id = session_id
        self.peer = peer
        self.state = lifecycle.State.READY if assume_version else lifecycle.State.AWAITING_INITIALIZE
        self.version: str | None = assume_version
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: models.Implementation | None = None
        self.log_level: str = "debug"  # until logging/setLevel says otherwise, the client gets everything
        self.subscriptions: set[str] = set()
        self._in_flight: dict[RequestKey, _InFlight] = {}
        self._listening: set[RequestKey] = set()  # subscriptions/listen requests: they end, not get cancelled
        # Set on close, or by `end_listens` when the transport winds down; subscriptions/listen waits on it.
        self.closed = asyncio.Event()

    # --- the adapter-facing interface ---------------------------------------------------------

    async def handle_request(self, method: str, params: Any, *, request_key: RequestKey | None,
                             trace_id: str) -> Outcome:
        return await self.begin_request(method, params, request_key=request_key, trace_id=trace_id)

    def begin_request(self, method: str, params: Any, *, request_key: RequestKey | None,
                      trace_id: str) -> Awaitable[Outcome]:
        """Admit a request now, serve it when awaited.

        Admission (era, lifecycle state, route) happens synchronously, in the order requests arrive,
        so an adapter that serves requests concurrently can still not let a request sent before
        `initialize` slip in after it. An admitted request is registered as in flight at once, so a
        cancellation handled before the returned awaitable runs still stops it. The awaitable does the work.
        """
        try:
            call, route = self._admit(method, params, request_key, trace_id)
        except ProtocolError as error:
            return _ready(self._reject(error.code, error.message, error.data, method=method))
        entry = None
        if request_key is not None:
            entry = self._in_flight[request_key] = _InFlight()
        return self._serve(method, params, call, route, entry)

    async def _serve(self, method: str, params: Any, call: Call, route: Route, entry: _InFlight | None) -> Outcome:
        outcome: Outcome | None = None
        try:
            outcome = await self._run(method, params, call, route, entry)
            return outcome
        finally:
            if entry is not None and self._in_flight.get(call.request_key) is entry:
                del self._in_flight[call.request_key]
            if method == "initialize" and not isinstance(outcome, Ok):
                self._initialize_failed()

    async def _run(self, method: str, params: Any, call: Call, route: Route, entry: _InFlight | None) -> Outcome:
        try:
            if entry is not None and entry.cancelled:
                raise _cancelled()
            result = await route.handler(self, parse_params(params, route.params), call)
            # An initialize answer is shaped for the version it agrees on, not the one assumed before it.
            version = result.protocol_version if isinstance(result, models.InitializeResult) else call.version
            return Ok(self._shape(result, version))
        except ProtocolError as error:
            return self._reject(error.code, error.message, error.data, method=method)
        except Exception:
            event_id = new_event_id()
            log.exception("request failed", method=method, eventId=event_id)
            return Rejection(code=ErrorCode.INTERNAL_ERROR, event_id=event_id,
                             message=f"Internal error while handling {method}; quote eventId {event_id}")

    def _initialize_failed(self) -> None:
        """An accepted `initialize` was not answered with a result: it negotiated nothing, so forget it."""
        verdict, self.state = lifecycle.step(self.state, lifecycle.Event.INITIALIZE_REJECTED)
        if verdict is lifecycle.Verdict.ACCEPT:
            self.version = None
            self.client_capabilities = {}
            self.client_info = None

    async def handle_notification(self, method: str, params: Any, *, trace_id: str) -> None:
        if _stateless_version(params) is None:
            verdict, self.state = lifecycle.step(self.state, lifecycle.classify(method, is_request=False))
            if verdict is not lifecycle.Verdict.ACCEPT:
                log.debug("notification ignored", method=method, state=self.state.value)
                return
        if method == "notifications/cancelled":
            try:
                cancelled = parse_params(params, CancelledParams)
            except ProtocolError:
                log.info("malformed cancellation ignored", eventId=new_event_id())
                return
            entry = self._in_flight.get(cancelled.request_id)
            if entry is not None and entry.task is not asyncio.current_task():
                log.info("request cancelled by client", requestKey=cancelled.request_id, reason=cancelled.reason)
                entry.cancelled = True
                if entry.task is not None:
                    entry.task.cancel()

    def cancel_all(self) -> None:
        """Stop every in-flight request except listeners, which end with their result when `closed` is set."""
        for key, entry in list(self._in_flight.items()):
            if key not in self._listening and entry.task is not None:
                entry.task.cancel()

    def end_listens(self) -> None:
        """End every subscriptions/listen with its result; other requests run on.

        For a transport that is winding down (stdin at EOF, server shutdown): the listens would otherwise
        wait for `close`, which the transport only calls once every request has been answered.
        """
        self.closed.set()

    async def close(self) -> None:
        self.state = lifecycle.State.CLOSED
        self.closed.set()
        self.cancel_all()

    # --- server-originated events -------------------------------------------------------------

    def list_changed(self, kind: str) -> None:
        if self.state is lifecycle.State.READY and self.version is not None and _loop_running():
            asyncio.ensure_future(self.peer.notify(f"notifications/{kind}/list_changed", {}, related=None))

    def resource_updated(self, uri: str) -> None:
        if uri in self.subscriptions and _loop_running():
            asyncio.ensure_future(self.peer.notify("notifications/resources/updated", {"uri": uri}, related=None))

    # --- admission: which era, which lifecycle verdict, which route ----------------------------

    def _admit(self, method: str, params: Any, request_key: RequestKey | None, trace_id: str) -> tuple[Call, Route]:
        meta = params.get("_meta") if isinstance(params, dict) else None
        meta = meta if isinstance(meta, dict) else {}
        requested = meta.get(META_PROTOCOL_VERSION)
        if requested is not None or method in STATELESS_ONLY_METHODS:
            return self._admit_stateless(method, meta, requested, request_key, trace_id)
        verdict, next_state = lifecycle.step(self.state, lifecycle.classify(method, is_request=True))
        if verdict is not lifecycle.Verdict.ACCEPT:
            raise ProtocolError(ErrorCode.INVALID_REQUEST,
                                f"'{method}' rejected: {lifecycle.REJECTION_REASONS[self.state]}",
                                {"state": self.state.value})
        self.state = next_state
        version = self.version or versions.LATEST_HANDSHAKE_VERSION
        route = ROUTES.get(method) or self.server.extensions.route(method)
        if route is None or not route.handshake:
            raise _method_not_found(method, version)
        return Call(version=version, request_key=request_key, trace_id=trace_id,
                    client_capabilities=self.client_capabilities, progress_token=meta.get("progressToken"),
                    log_level=self.log_level), route

    def _admit_stateless(self, method: str, meta: dict[str, Any], requested: Any, request_key: RequestKey | None,
                         trace_id: str) -> tuple[Call, Route]:
        if requested is None:
            raise ProtocolError(ErrorCode.INVALID_PARAMS,
                                f"'{method}' needs params._meta[\"{META_PROTOCOL_VERSION}\"] (protocol 2026-07-28 and later)",
                                {"path": f"$._meta.{META_PROTOCOL_VERSION}"})
        if requested not in versions.STATELESS_VERSIONS:
            raise ProtocolError(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
                                f"Unsupported protocol version: {requested!r}",
                                {"requested": str(requested), "supported": list(versions.SUPPORTED_VERSIONS)})
        capabilities = meta.get(META_CLIENT_CAPABILITIES)
        if not isinstance(capabilities, dict):
            raise ProtocolError(ErrorCode.INVALID_PARAMS,
                                f"params._meta[\"{META_CLIENT_CAPABILITIES}\"] must be an object",
                                {"path": f"$._meta.{META_CLIENT_CAPABILITIES}"})
        log_level = meta.get(META_LOG_LEVEL)
        route = ROUTES.get(method) or self.server.extensions.route(method)
        if route is None or not route.stateless:
            raise _method_not_found(method, requested)
        return Call(version=requested, request_key=request_key, trace_id=trace_id,
                    client_capabilities=capabilities, progress_token=meta.get("progressToken"),
                    log_level=log_level if isinstance(log_level, str) else None), route

    # --- results and rejections -----------------------------------------------------------------

    def _shape(self, result: Any, version: str) -> dict[str, Any]:
        wire = to_wire(result, version)
        if not versions.features(version).handshake:
            is_input = isinstance(result, models.InputRequiredResult)
            wire["resultType"] = "input_required" if is_input else "complete"
            if isinstance(result, models.CACHEABLE_RESULTS):
                wire["ttlMs"] = self.server.options.cache_ttl_ms
                wire["cacheScope"] = self.server.options.cache_scope
            meta = wire.setdefault("_meta", {})
            meta[META_SERVER_INFO] = _server_info_wire(self.server, version)
        return wire

    def _reject(self, code: ErrorCode, message: str, data: dict[str, Any] | None, *, method: str) -> Rejection:
        event_id = new_event_id()
        if code is not ErrorCode.REQUEST_CANCELLED:
            log.info("request rejected", method=method, code=code.value, reason=message, eventId=event_id)
        return Rejection(code=code, message=message, data=data, event_id=event_id)

    def context(self, call: Call, answers: dict[str, Any] | None = None) -> ToolContext:
        return ToolContext(peer=self.peer, version=call.version, request_key=call.request_key,
                           client_capabilities=call.client_capabilities, progress_token=call.progress_token,
                           log_level=call.log_level, answers=answers, session_id=self.session_id,
                           trace_id=call.trace_id)

    async def run_cancellable(self, call: Call, work: Awaitable[Any]) -> Any:
        """Run `work` so that `notifications/cancelled` for this request really stops it.

        The work runs in the adapter's own task for this request (no extra task on the hot path): a
        client's cancellation cancels that task, and is told apart from any other cancellation (shutdown,
        timeout) by the `cancelled` flag of the request's in-flight entry.
        """
        key = call.request_key
        current = asyncio.current_task()
        entry = self._in_flight.get(key) if key is not None else None
        if entry is None or current is None:
            return await self._with_timeout(work)
        if entry.cancelled:
            _discard(work)
            raise _cancelled()
        entry.task = current
        try:
            return await self._with_timeout(work)
        except asyncio.CancelledError:
            if entry.cancelled:
                current.uncancel()
                raise _cancelled() from None
            raise
        finally:
            entry.task = None

    async def _with_timeout(self, work: Awaitable[Any]) -> Any:
        timeout = self.server.options.tool_timeout_s
        if timeout is None:
            return await work
        async with asyncio.timeout(timeout):
            return await work


async def _ready(outcome: Outcome) -> Outcome:
    return outcome


def _cancelled() -> ProtocolError:
    return ProtocolError(ErrorCode.REQUEST_CANCELLED, "the request was cancelled by the client")


def _discard(work: Awaitable[Any]) -> None:
    """Drop work that will never run (without the 'coroutine was never awaited' warning)."""
    close = getattr(work, "close", None)
    if close is not None:
        close()


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False


def _stateless_version(params: Any) -> Any:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None


def _method_not_found(method: str, version: str) -> ProtocolError:
    return ProtocolError(ErrorCode.METHOD_NOT_FOUND, f"Method not found: {method} (protocol version {version})",
                         {"method": method})


def _server_info_wire(server: McpServer, version: str) -> dict[str, Any]:
    return to_wire(server.info, version)


# --- method handlers ---------------------------------------------------------------------------

async def _initialize(session: Session, params: InitializeParams, call: Call) -> models.InitializeResult:
    version = versions.negotiate_handshake_version(params.protocol_version)
    session.version = version
    session.client_capabilities = params.capabilities
    session.client_info = params.client_info
    log.info("session initialized", requested=params.protocol_version, negotiated=version,
             client=params.client_info.name)
    return models.InitializeResult(protocol_version=version, capabilities=session.server.capabilities(version),
                                   server_info=session.server.info, instructions=session.server.instructions)


async def _discover(session: Session, params: NoParams, call: Call) -> models.DiscoverResult:
    server = session.server
    return models.DiscoverResult(supported_versions=list(versions.SUPPORTED_VERSIONS),
                                 capabilities=server.capabilities(call.version), instructions=server.instructions)


async def _ping(session: Session, params: NoParams, call: Call) -> models.EmptyResult:
    return models.EmptyResult()


async def _list_tools(session: Session, params: PaginatedParams, call: Call) -> models.ListToolsResult:
    tools, cursor = page(session.server.tools.definitions(), params.cursor, session.server.options.page_size)
    return models.ListToolsResult(tools=tools, next_cursor=cursor)


async def _call_tool(session: Session, params: CallToolParams, call: Call) -> Any:
    server = session.server
    tool = server.tools.get(params.name)
    if tool is None:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, f"Unknown tool: {params.name}",
                            {"path": "$.name", "tool": params.name})
    arguments = params.arguments or {}
    tool.check_arguments(arguments)
    answers = _gathered_answers(session, params, call, "tools/call", params.name)
    ctx = session.context(call, answers)
    try:
        value = await session.run_cancellable(call, tool.handler(arguments, ctx))
        return to_call_result(value, tool)
    except InputNeeded as need:
        return _input_required(session, need, "tools/call", params.name)
    except ToolError as error:
        return _tool_failure(str(error), params.name)
    except TimeoutError:
        return _tool_failure(f"The tool '{params.name}' timed out after {server.options.tool_timeout_s} s.",
                             params.name)
    except ProtocolError:
        raise
    except OutputSchemaViolation as violation:
        return _tool_failure(f"The tool '{params.name}' produced a result that does not match its output schema.",
                             params.name, detail=str(violation))
    except Exception:
        return _tool_failure(f"The tool '{params.name}' failed unexpectedly.", params.name, with_traceback=True)


def _gathered_answers(session: Session, params: Any, call: Call, method: str, name: str) -> dict[str, Any]:
    if versions.features(call.version).handshake:
        return {}
    answers = session.server.sealer.open(params.request_state, method, name) if params.request_state else {}
    answers.update(params.input_responses or {})
    return answers


def _input_required(session: Session, need: InputNeeded, method: str, name: str) -> models.InputRequiredResult:
    return models.InputRequiredResult(input_requests=need.requests,
                                      request_state=session.server.sealer.seal(need.answers, method, name))


def _tool_failure(message: str, tool: str, *, detail: str | None = None,
                  with_traceback: bool = False) -> models.CallToolResult:
    event_id = new_event_id()
    if with_traceback:
        log.exception("tool failed", tool=tool, code=ErrorCode.TOOL_EXECUTION_FAILED.value, eventId=event_id)
    else:
        log.warning("tool failed", tool=tool, code=ErrorCode.TOOL_EXECUTION_FAILED.value, reason=detail or message,
                    eventId=event_id)
    return models.CallToolResult(content=[models.TextContent(text=f"{message} (eventId {event_id})")], is_error=True,
                                 meta={"io.hexmcp/eventId": event_id,
                                       "io.hexmcp/errorCode": ErrorCode.TOOL_EXECUTION_FAILED.value})


async def _list_resources(session: Session, params: PaginatedParams, call: Call) -> models.ListResourcesResult:
    items, cursor = page(session.server.resources.definitions(), params.cursor, session.server.options.page_size)
    return models.ListResourcesResult(resources=items, next_cursor=cursor)


async def _list_templates(session: Session, params: PaginatedParams, call: Call) -> models.ListResourceTemplatesResult:
    items, cursor = page(session.server.resources.template_definitions(), params.cursor,
                         session.server.options.page_size)
    return models.ListResourceTemplatesResult(resource_templates=items, next_cursor=cursor)


async def _read_resource(session: Session, params: ResourceParams, call: Call) -> models.ReadResourceResult:
    return await session.run_cancellable(call, session.server.resources.read(params.uri))


async def _subscribe(session: Session, params: ResourceParams, call: Call) -> models.EmptyResult:
    session.subscriptions.add(params.uri)
    return models.EmptyResult()


async def _unsubscribe(session: Session, params: ResourceParams, call: Call) -> models.EmptyResult:
    session.subscriptions.discard(params.uri)
    return models.EmptyResult()


async def _list_prompts(session: Session, params: PaginatedParams, call: Call) -> models.ListPromptsResult:
    items, cursor = page(session.server.prompts.definitions(), params.cursor, session.server.options.page_size)
    return models.ListPromptsResult(prompts=items, next_cursor=cursor)


async def _get_prompt(session: Session, params: GetPromptParams, call: Call) -> Any:
    answers = _gathered_answers(session, params, call, "prompts/get", params.name)
    ctx = session.context(call, answers)
    try:
        return await session.run_cancellable(call, session.server.prompts.render(params.name, params.arguments or {},
                                                                                 ctx))
    except InputNeeded as need:
        return _input_required(session, need, "prompts/get", params.name)


async def _complete(session: Session, params: CompleteParams, call: Call) -> models.CompleteResult:
    ref_type = params.ref.get("type")
    server = session.server
    if ref_type == "ref/prompt":
        completer = server.prompts.get(str(params.ref.get("name"))).completer
    elif ref_type == "ref/resource":
        completer = server.resources.completer_for(str(params.ref.get("uri")))
    else:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, f"Unknown completion reference type: {ref_type!r}",
                            {"path": "$.ref.type"})
    values: list[str] = []
    if completer is not None:
        context_arguments = (params.context.arguments if params.context else None) or {}
        values = await completer(params.argument.name, params.argument.value, context_arguments)
    shown = values[:100]
    return models.CompleteResult(completion=models.Completion(values=shown, total=len(values),
                                                              has_more=len(values) > len(shown)))


async def _set_level(session: Session, params: SetLevelParams, call: Call) -> models.EmptyResult:
    session.log_level = params.level
    return models.EmptyResult()


async def _listen(session: Session, params: ListenParams, call: Call) -> models.SubscriptionsListenResult:
    """2026-07-28: hold the request open and stream what the client opted in to, until it ends."""
    subscription = session.server.subscriptions.open(session.peer, call.request_key, params.notifications)
    session._listening.add(call.request_key)
    try:
        await session.peer.notify("notifications/subscriptions/acknowledged", subscription.acknowledgement(),
                                  related=call.request_key)
        await session.run_cancellable(call, session.closed.wait())
    finally:
        session._listening.discard(call.request_key)
        session.server.subscriptions.close(subscription)
    return models.SubscriptionsListenResult(meta=subscription.meta())


ROUTES: dict[str, Route] = {
    "initialize": Route(handler=_initialize, params=InitializeParams, stateless=False),
    "server/discover": Route(handler=_discover, params=NoParams, handshake=False),
    "ping": Route(handler=_ping, params=NoParams, stateless=False),
    "tools/list": Route(handler=_list_tools, params=PaginatedParams),
    "tools/call": Route(handler=_call_tool, params=CallToolParams),
    "resources/list": Route(handler=_list_resources, params=PaginatedParams),
    "resources/templates/list": Route(handler=_list_templates, params=PaginatedParams),
    "resources/read": Route(handler=_read_resource, params=ResourceParams),
    "resources/subscribe": Route(handler=_subscribe, params=ResourceParams, stateless=False),
    "resources/unsubscribe": Route(handler=_unsubscribe, params=ResourceParams, stateless=False),
    "prompts/list": Route(handler=_list_prompts, params=PaginatedParams),
    "prompts/get": Route(handler=_get_prompt, params=GetPromptParams),
    "completion/complete": Route(handler=_complete, params=CompleteParams),
    "logging/setLevel": Route(handler=_set_level, params=SetLevelParams, stateless=False),
    "subscriptions/listen": Route(handler=_listen, params=ListenParams, handshake=False),
}
STATELESS_ONLY_METHODS = frozenset(method for method, route in ROUTES.items() if not route.handshake) | {
    "server/discover"}
