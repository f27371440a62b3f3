"""The JSON-RPC layer every transport shares, around a core `Session`: each of its jobs written once.

stdio, WebSocket (both dialects, through `RpcConnection`), Streamable HTTP (both eras) and the REST
dialect all do the same four things with the core's values; they do them here:
- bind a request's `sessionId` and `traceId` into the log context, so every line logged while it is
  served (the core's "request rejected" with its eventId included) can be followed back to it;
- turn an `Outcome` into the JSON-RPC answer (none for a request the client cancelled);
- refuse with an error that carries a fresh eventId, logged under that id so a quoted id can be found;
- ask the client (sampling, elicitation, roots) and match its answers to the asking requests.

What stays with each transport: how bytes arrive and leave, and which of its streams an answer goes on.
`hexmcp.wire` below this is sans-IO framing (classify, encode) and request correlation; nothing here
touches a socket either.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
from typing import Any, Awaitable, Callable, Iterator

import structlog

from hexmcp.core import ErrorCode, Ok, Outcome, PeerRequestFailed, Rejection, Session, new_event_id
from hexmcp.core.log import bind_request_ids, set_request_ids
from hexmcp.wire import jsonrpc
from hexmcp.wire.pending import PendingRequests

log = structlog.get_logger("hexmcp.adapters")


class TraceIds:
    """Trace ids for the requests of one owner (a connection, or every HTTP request): `<prefix>-<n>`."""

    def __init__(self, prefix: str) -> None:
        # `next()`: the next id, as one C call (a map formatting a counter's numbers), not a Python method:
        # every request takes one.
        template = prefix.replace("{", "{{").replace("}", "}}") + "-{}"
        self.next: Callable[[], str] = map(template.format, itertools.count(1)).__next__


HTTP_TRACES = TraceIds("h")
"""HTTP requests are served by many short-lived core sessions: one counter for all of them."""


def bind(session_id: str, trace_id: str) -> None:
    """Bind the ids into the current context and leave them there, until the task ends or the next
    message binds its own: a task spawned from here copies them (one ContextVar set: core/log.py)."""
    bind_request_ids(session_id, trace_id)


@contextlib.contextmanager
def bound(session_id: str, trace_id: str) -> Iterator[None]:
    """The ids bound for the duration of a block only (an error minted between two requests)."""
    with structlog.contextvars.bound_contextvars(sessionId=session_id, traceId=trace_id):
        yield


def serve_request(core: Session, request: jsonrpc.Request, trace_id: str) -> Awaitable[Outcome]:
    """One request through the core, every log line it causes carrying its session and trace ids: admitted
    now, served when the returned awaitable is awaited (in the same task: the ids are bound here).

    The ids are bound and left (`bind`), not reset afterwards: binding and resetting costs several times
    more, and every caller runs this in a task of its own (an HTTP request, a batch item, a
    2026 request) or on a reader that binds again before its next message. A plain function returning the
    core's awaitable, not a coroutine of its own: every request would pay a frame that only passes it on.
    """
    set_request_ids((core.session_id, trace_id))  # `bind`, written out: this runs for every request
    # `begin_request` directly: `handle_request` only awaits it.
    return core.begin_request(request.method, request.params, request_key=request.id, trace_id=trace_id)


async def serve_notification(core: Session, notification: jsonrpc.Notification, trace_id: str) -> None:
    bind(core.session_id, trace_id)
    await core.handle_notification(notification.method, notification.params, trace_id=trace_id)


def answer(request_id: jsonrpc.RequestId, outcome: Outcome, *, with_version: bool = True) -> dict[str, Any] | None:
    """The JSON-RPC answer for an outcome; None for a cancelled request (the client wants no answer)."""
    if isinstance(outcome, Ok):  # `Ok.encodable` written out for an answer without structured content
        result = outcome.result if outcome.structured_json is None else outcome.encodable()
        return jsonrpc.encode_result(request_id, result, with_version=with_version)
    if outcome.code is ErrorCode.REQUEST_CANCELLED:
        return None
    return jsonrpc.encode_rejection(request_id, outcome, with_version=with_version)


RefusalReporter = Callable[[Rejection], None]
REFUSAL_REPORTER: contextvars.ContextVar[RefusalReporter | None] = contextvars.ContextVar(
    "hexmcp_refusal_reporter", default=None)
"""Who hears the refusals minted in this context (the audit trail, through the core's observers): set by
the transport around what it serves (`HttpApp.__call__`, `RpcConnection`), which knows who was refused."""


@contextlib.contextmanager
def reporting_refusals(reporter: RefusalReporter | None) -> Iterator[None]:
    """Refusals minted in the block are heard by `reporter` (None: by nobody)."""
    token = REFUSAL_REPORTER.set(reporter)
    try:
        yield
    finally:
        REFUSAL_REPORTER.reset(token)


def refusal(code: ErrorCode, message: str, data: dict[str, Any] | None = None) -> Rejection:
    """A rejection minted by an adapter (bad framing, a busy server, a transport rule), logged under its
    fresh eventId so the id a client quotes can be found in the logs, and reported to whoever the
    transport set to hear refusals (the audit trail)."""
    rejection = Rejection(code=code, message=message, data=data, event_id=new_event_id())
    if "traceId" in structlog.contextvars.get_contextvars():  # the transport bound this refusal's ids (`bound`)
        _log_and_report(rejection)
    else:
        # Refused before the core (HTTP's 400/404/406/413/415/429, an upgrade turned away, a batch's invalid
        # or busy item): a trace of its own, or the line would carry no traceId, or the one bound last in
        # this task (a notification earlier in the same batch). Refusals are rare: not the hot path.
        with structlog.contextvars.bound_contextvars(traceId=HTTP_TRACES.next()):
            _log_and_report(rejection)
    return rejection


def _log_and_report(rejection: Rejection) -> None:
    log.info("request refused", code=rejection.code.value, reason=rejection.message, eventId=rejection.event_id)
    reporter = REFUSAL_REPORTER.get()
    if reporter is not None:
        try:
            reporter(rejection)
        except Exception:  # the client's answer never depends on the audit
            log.exception("refusal reporter failed", eventId=rejection.event_id)


def error_reply(request_id: jsonrpc.RequestId | None, code: ErrorCode, message: str,
                data: dict[str, Any] | None = None, *, with_version: bool = True) -> dict[str, Any]:
    """`refusal` as a JSON-RPC error message, its eventId in `error.data`."""
    return jsonrpc.encode_rejection(request_id, refusal(code, message, data), with_version=with_version)


def invalid_reply(message: jsonrpc.Invalid, *, with_version: bool = True) -> dict[str, Any]:
    """The answer to something that is not a JSON-RPC message (the id echoed when it could be read)."""
    return error_reply(message.id, ErrorCode.INVALID_REQUEST, f"Invalid request: {message.message}",
                       with_version=with_version)


SendMessage = Callable[[dict[str, Any]], Awaitable[None]]


def pending_requests(*, shared: bool = False) -> PendingRequests:
    """Where the requests the server sends its client wait for their answers: ids `s-1`, `s-2`... in one
    client's table; `shared` (one table for every client's answers): ids no other client can guess."""
    return PendingRequests(id_prefix="s-", unguessable=shared)


async def ask_client(pending: PendingRequests, method: str, params: dict[str, Any], send: SendMessage,
                     timeout_s: float, *, with_version: bool = True) -> dict[str, Any]:
    """Send the client a request through `send` and return its result; `PeerRequestFailed` otherwise.

    The answer may come back on the same pipe (stdio, WebSocket) or on another POST (HTTP): whoever
    reads it hands it over (`take_answer`)."""
    request_id, future = pending.open()
    try:
        await send(jsonrpc.encode_request(request_id, method, params, with_version=with_version))
        # Not `wait_for`: on 3.11 it returns the answer and swallows a cancellation (the client's
        # notifications/cancelled) that lands in the same loop pass as the answer, and the cancelled call
        # is answered after all.
        async with asyncio.timeout(timeout_s):
            response = await future
    except TimeoutError:
        raise PeerRequestFailed(f"no answer to {method} within {timeout_s:.0f} s") from None
    finally:
        pending.close(request_id)
    return jsonrpc.result_of(response)


def take_answer(pending: PendingRequests, response: jsonrpc.Response) -> None:
    """A client's answer, to the request waiting for it (an unknown or late id is dropped)."""
    if not pending.resolve(response):
        # Which id, so a client's stray answer (a duplicate, a late one, one to another session) can be traced.
        log.info("response to an unknown request ignored", responseId=response.id)


def no_more_answers(pending: PendingRequests, reason: str) -> None:
    """No answer can come any more (input closed, session ended): every request waiting fails."""
    pending.fail_all(PeerRequestFailed(reason))
