"""One connection's view of the server: lifecycle, negotiated version, and request dispatch.

`handle_request` and `handle_notification` are the whole interface an adapter needs. They take a
method name and params (already decoded JSON) and return values: `Ok(result)` with the result shaped
for the request's protocol version, or a `Rejection`. Nothing here knows JSON-RPC, ids or framing.
What lives here: admission (era, lifecycle verdict, route), in-flight tracking and cancellation, and
shaping results. What each method does is `handlers.py`'s; the session is handed the method table.
Every state change goes through `lifecycle`'s table (`lifecycle.step`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable

import structlog

from . import lifecycle, models, observation, versions
from .context import ToolContext
from .convert import to_wire
from .echo import clip_text
from .errors import ErrorCode, ProtocolError, Rejection, SemanticCode
from .ids import new_event_id
from .meta import META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROTOCOL_VERSION, META_SERVER_INFO, request_meta
from .params import CancelledParams, parse_params
from .ports import Peer, RequestKey
from .routing import Call, MethodTable, Ok, Outcome, Route
from .server_view import ServerView
from .tasks.calls import CreatedTask
from .tools import ToolAnswer

log = structlog.get_logger("hexmcp.core")


class _InFlight:
    """A request admitted and not yet answered.

    Registered at admission, synchronously, so a `notifications/cancelled` that arrives right behind
    its request always finds it, even before the request's task has run. Built for every request with an
    id: no `__init__` of its own (built in C), the fields' defaults are the class's until set.
    """

    task: asyncio.Task[Any] | None = None
    """The task running the request's cancellable work (`run_cancellable`), while it runs."""
    cancelled: bool = False
    """The client cancelled it: work not yet started never starts, work running is stopped."""


class Session:
    def __init__(self, server: ServerView, *, session_id: str, peer: Peer, methods: MethodTable,
                 assume_version: str | None, client_id: str | None = None, transport: str | None = None) -> None:
        self.server = server
        self.transport = transport
        self.opened_at = time.monotonic()
        self._methods = methods
        self.session_id = session_id
        # Who is asking, for per-client limits: outlives the session when a client opens one per request.
        self.client_id = client_id or session_id
        self.peer = peer
        self.state = lifecycle.State.READY if assume_version else lifecycle.State.AWAITING_INITIALIZE
        self.version: str | None = assume_version
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: models.Implementation | None = None
        self.log_level: str = "debug"  # until logging/setLevel says otherwise, the client gets everything
        self.subscriptions: set[str] = set()
        self._in_flight: dict[RequestKey, _InFlight] = {}
        self.listening: set[RequestKey] = set()  # subscriptions/listen requests: they end, not get cancelled
        # Notifications the server sends on its own (list changes, resource updates), kept until sent:
        # the event loop holds only weak references to tasks, and one collected mid-send is lost.
        self._notifying: set[asyncio.Task[None]] = set()
        # Set on close, or by `end_listens` when the transport winds down; subscriptions/listen waits on it.
        self.closed = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None  # see _current_task

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
        try:  # admission: which era, which lifecycle verdict, which route (written out: every request)
            if request_key is not None and request_key in self._in_flight:
                raise _id_in_flight()
            meta = params.get("_meta") if isinstance(params, dict) else None  # request_meta, without a call or a new {}
            if type(meta) is not dict:
                meta = meta if isinstance(meta, dict) else _NO_META
            if meta:  # most requests carry no _meta: nothing to look up
                token = meta.get("progressToken")
                if token is not None and type(token) is not str and type(token) is not int:
                    raise _bad_progress_token(token)
            requested = meta.get(META_PROTOCOL_VERSION)
            # A 2026-only method without `_meta` is a stateless request that forgot its envelope (-32602
            # says what is missing), unless a handshake version is in force: that version has no such
            # method, and says so (-32601), as for any other method it lacks.
            if requested is not None or (method in self._methods.stateless_only and self.version is None):
                call, route = self._admit_stateless(method, meta, requested, request_key, trace_id)
            else:
                # `lifecycle.step(self.state, lifecycle.classify(method, is_request=True))`, written out.
                state = self.state
                verdict, next_state = lifecycle.TABLE[(state, lifecycle.NAMED_EVENTS.get(method, lifecycle.Event.REQUEST))]
                if verdict is not lifecycle.Verdict.ACCEPT:
                    raise ProtocolError(ErrorCode.INVALID_REQUEST,
                                        f"'{method}' rejected: {lifecycle.REJECTION_REASONS[state]}",
                                        {"state": state.value})
                self.state = next_state
                version = self.version or versions.LATEST_HANDSHAKE_VERSION
                found = self._methods.routes.get(method)
                if found is None or not found.handshake:
                    raise _method_not_found(method, version)
                route = found
                # Positional: a class called with keywords packs them into a dict and unpacks it again.
                call = Call(version, request_key, trace_id, self.client_capabilities, meta.get("progressToken"),
                            self.log_level)
        except ProtocolError as error:
            rejection = self._reject(error.code, error.message, error.data, method=method)
            refusal_observers = self.server.refusal_observers
            if refusal_observers:  # not admitted, so never observed as a request: the audit hears it here
                observation.report_refusal(refusal_observers, observation.ObservedRefusal(
                    event_id=rejection.event_id, code=rejection.code, message=rejection.message,
                    transport=self.transport, session_id=self.session_id, client_id=self.client_id,
                    trace_id=trace_id, method=method, params=params, request_key=request_key))
            return _ready(rejection)
        entry = None
        if request_key is not None:
            entry = self._in_flight[request_key] = _InFlight()
        return self._serve(method, params, call, route, entry)

    async def _serve(self, method: str, params: Any, call: Call, route: Route, entry: _InFlight | None) -> Outcome:
        outcome: Outcome | None = None
        scopes: list[observation.RequestScope] | None = None
        started = 0.0
        try:
            if self.server.observers:
                started, scopes = time.perf_counter(), []
                observation.open_scopes(self.server.observers, self._observed(method, params, call), scopes)
            if entry is not None and entry.cancelled:
                raise _cancelled()
            result = await route.handler(self, parse_params(params, route.params), call)
            # An initialize answer is shaped for the version it agrees on, not the one assumed before it.
            version = result.protocol_version if type(result) is models.InitializeResult else call.version
            outcome = self._shape(result, version)
            return outcome
        except ProtocolError as error:  # the handler's, or an observer's refusal (a rate limit)
            outcome = self._reject(error.code, error.message, error.data, method=method)
            return outcome
        except Exception:
            event_id = new_event_id()
            log.exception("request failed", method=method, eventId=event_id)
            outcome = Rejection(code=ErrorCode.INTERNAL_ERROR, event_id=event_id,
                                message=f"Internal error while handling {method}; quote eventId {event_id}")
            return outcome
        finally:
            if entry is not None and self._in_flight.get(call.request_key) is entry:
                del self._in_flight[call.request_key]
            if method == "initialize" and type(outcome) is not Ok:
                self._initialize_failed()
            if scopes:
                observation.finish_scopes(scopes, outcome, time.perf_counter() - started)

    def _observed(self, method: str, params: Any, call: Call) -> observation.ObservedRequest:
        arguments = params.get("arguments") if method == "tools/call" and isinstance(params, dict) else None
        return observation.ObservedRequest(
            method=method, target=observation.request_target(method, params), arguments=arguments, params=params,
            meta=request_meta(params), request_key=call.request_key, session_id=self.session_id,
            client_id=self.client_id, trace_id=call.trace_id, protocol_version=call.version, transport=self.transport)

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
            # A cancellation follows the request it names, not the lifecycle: 2026-07-28 notifications carry
            # no protocol version, so one naming a stateless request on a connection that never initialized
            # would be dropped here, and the request it names ran on.
            if verdict is not lifecycle.Verdict.ACCEPT and method != "notifications/cancelled":
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
            if key not in self.listening and entry.task is not None:
                entry.task.cancel()

    def end_listens(self) -> None:
        """End every subscriptions/listen with its result; other requests run on.

        For a transport that is winding down (stdin at EOF, server shutdown): the listens would otherwise
        wait for `close`, which the transport only calls once every request has been answered.
        """
        self.closed.set()

    async def close(self) -> None:
        handshake = self.client_info is not None  # set by a served initialize only
        _, self.state = lifecycle.step(self.state, lifecycle.Event.CLOSE)
        self.closed.set()
        self.cancel_all()
        if self.server.observers:
            observation.end_session(self.server.observers, observation.ObservedSession(
                session_id=self.session_id, client_id=self.client_id, transport=self.transport,
                protocol_version=self.version, handshake=handshake, duration_s=time.monotonic() - self.opened_at))

    # --- server-originated events -------------------------------------------------------------

    def list_changed(self, kind: str) -> None:
        if self.state is lifecycle.State.READY and self.version is not None:
            self._notify_soon(f"notifications/{kind}/list_changed", {})

    def resource_updated(self, uri: str) -> None:
        if uri in self.subscriptions:
            self._notify_soon("notifications/resources/updated", {"uri": uri})

    def _notify_soon(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification from a synchronous call site (a registry change), if a loop is running."""
        if not _loop_running():
            return
        task = asyncio.ensure_future(self.peer.notify(method, params, related=None))
        self._notifying.add(task)
        task.add_done_callback(self._notifying.discard)

    # --- admission: which era, which lifecycle verdict, which route ----------------------------

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
        route = self._methods.routes.get(method)
        if route is None or not route.stateless:
            raise _method_not_found(method, requested)
        return Call(version=requested, request_key=request_key, trace_id=trace_id,
                    client_capabilities=capabilities, progress_token=meta.get("progressToken"),
                    log_level=log_level if isinstance(log_level, str) else None), route

    # --- results and rejections -----------------------------------------------------------------

    def _shape(self, result: Any, version: str) -> Ok:
        structured_json = None
        wire: dict[str, Any]
        if type(result) is ToolAnswer:
            if result.structured is None:  # `ToolAnswer.shaped`, written out for a tool's text: most answers
                wire = {"content": [{"text": result.text, "type": "text"}]}
            else:
                wire, structured_json = result.shaped(version)
        elif isinstance(result, CreatedTask):
            wire = result.wire()
        else:
            wire = to_wire(result, version)
        if not versions.FEATURES[version].handshake:  # `versions.features`, without the call
            is_input = isinstance(result, models.InputRequiredResult)
            if not isinstance(result, CreatedTask):  # a CreatedTask says "task" itself
                wire["resultType"] = "input_required" if is_input else "complete"
            if isinstance(result, models.CACHEABLE_RESULTS):
                wire["ttlMs"] = self.server.options.cache_ttl_ms
                wire["cacheScope"] = self.server.options.cache_scope
            meta = wire.setdefault("_meta", {})
            meta[META_SERVER_INFO] = _server_info_wire(self.server, version)
        return Ok(wire, structured_json)

    def _reject(self, code: SemanticCode, message: str, data: dict[str, Any] | None, *, method: str) -> Rejection:
        rejection = Rejection(code=code, message=message, data=data, event_id=new_event_id())
        if code is not ErrorCode.REQUEST_CANCELLED:  # the clipped message: the log is bounded as the answer is
            log.info("request rejected", method=clip_text(method), code=code.value, reason=rejection.message,
                     eventId=rejection.event_id)
        return rejection

    def context(self, call: Call, answers: dict[str, Any] | None = None) -> ToolContext:
        return ToolContext(peer=self.peer, version=call.version, request_key=call.request_key,
                           client_capabilities=call.client_capabilities, progress_token=call.progress_token,
                           log_level=call.log_level, answers=answers, session_id=self.session_id,
                           client_id=self.client_id, trace_id=call.trace_id)

    async def run_cancellable(self, call: Call, work: Awaitable[Any]) -> Any:
        """Run `work` so that `notifications/cancelled` for this request really stops it.

        The work runs in the adapter's own task for this request (no extra task on the hot path): a
        client's cancellation cancels that task, and is told apart from any other cancellation (shutdown,
        timeout) by the `cancelled` flag of the request's in-flight entry.
        """
        key = call.request_key
        entry = self._in_flight.get(key) if key is not None else None
        current = None
        if entry is not None:  # `_current_task`, its usual path written out: this runs for every tool call
            loop = self._loop
            current = asyncio.current_task(loop) if loop is not None else None
            if current is None:
                current = self._current_task()
        if entry is None or current is None:  # no entry, no task looked up
            return await self._with_timeout(work)
        if entry.cancelled:
            _discard(work)
            raise _cancelled()
        entry.task = current
        timeout = self.server.options.tool_timeout_s
        try:
            if timeout is None:  # the work awaited here, not in `_with_timeout`: this is every call's path
                result = await work
            else:
                async with asyncio.timeout(timeout):
                    result = await work
            if entry.cancelled:  # the work swallowed the cancellation: a cancelled request still gets no answer
                if current.cancelling():
                    current.uncancel()
                raise _cancelled()
            return result
        except asyncio.CancelledError:
            if entry.cancelled:
                current.uncancel()
                raise _cancelled() from None
            raise
        finally:
            entry.task = None

    def _current_task(self) -> asyncio.Task[Any] | None:
        # Given its loop, `current_task` skips `get_running_loop()`, a getpid() system call on CPython 3.11.
        # The loop is remembered from the last lookup; a session served from another loop since then
        # finds no current task of the remembered loop there, and looks the loop up again.
        current = asyncio.current_task(self._loop) if self._loop is not None else None
        if current is None:
            self._loop = asyncio.get_running_loop()
            current = asyncio.current_task(self._loop)
        return current

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


def _id_in_flight() -> ProtocolError:
    """A second request under the id of one still running: the two could not be told apart (a cancellation
    naming the id, the progress and questions related to it), so the second is refused and the first runs on."""
    return ProtocolError(ErrorCode.INVALID_REQUEST,
                         "Invalid request: a request with this id is still in flight on this session; "
                         "a request id must not be reused until its request is answered")


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


_NO_META: dict[str, Any] = {}  # a request without `_meta`: only ever read


def _stateless_version(params: Any) -> Any:
    return request_meta(params).get(META_PROTOCOL_VERSION)


def _bad_progress_token(token: Any) -> ProtocolError:
    """Every version's schema types a progress token as a string or an integer; anything else would be
    echoed back in every progress notification."""
    kind = _JSON_KINDS.get(type(token), type(token).__name__)
    return ProtocolError(ErrorCode.INVALID_PARAMS, f"params._meta.progressToken must be a string or an integer, not {kind}",
                         {"path": "$._meta.progressToken"})


_JSON_KINDS = {dict: "an object", list: "an array", float: "a fractional number", bool: "a boolean"}


def _method_not_found(method: str, version: str) -> ProtocolError:
    return ProtocolError(ErrorCode.METHOD_NOT_FOUND, f"Method not found: {method} (protocol version {version})",
                         {"method": method})


def _server_info_wire(server: ServerView, version: str) -> dict[str, Any]:
    return to_wire(server.info, version)
