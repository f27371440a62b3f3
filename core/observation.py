"""The observation port: how metrics, tracing, audit and admission policies see requests and sessions.

The core calls each registered `RequestObserver` when it starts serving an admitted request and when the
request ends, on every transport, with plain values: which method and target (tool or prompt name, or
resource URI), who asked (session, client, trace), the outcome (ok, tool error, protocol error or
cancelled) with its code, eventId and duration. Observers live outside the core (adapters, tools); the
core only calls them. With no observer registered the hot path pays one truth test.

An observer may refuse a request (a rate limit, say) by raising `ProtocolError` from `request_started`;
the client gets that rejection and no handler runs. `request_started` runs in the task that serves the
request, so an observer can make something current for the handler's duration (an OpenTelemetry span set
as current, say) and undo it in the scope's `request_finished`.
"""

from __future__ import annotations

from typing import Any, Protocol

import attrs
import structlog

from .errors import ErrorCode, Rejection, SemanticCode
from .meta import META_ERROR_CODE, META_EVENT_ID
from .ports import RequestKey
from .routing import Ok

log = structlog.get_logger("hexmcp.core")

OUTCOME_OK = "ok"
OUTCOME_TOOL_ERROR = "tool_error"  # a tools/call answered with isError: true
OUTCOME_ERROR = "error"  # a rejection: the client got a JSON-RPC error
OUTCOME_CANCELLED = "cancelled"  # the client cancelled it, or the server stopped it (shutdown)


@attrs.frozen(kw_only=True)
class ObservedRequest:
    """One admitted request, as observers see it when it starts."""

    method: str
    target: str | None
    """The tool (tools/call) or prompt (prompts/get) name, or the resource URI (resources/read, subscribe)."""
    arguments: Any
    """A tools/call's arguments (a JSON value, untrusted); None for other methods."""
    params: Any = None
    """The request's whole params as the client sent them (untrusted JSON; the audit trail keeps them so a
    request can be replayed). None when the adapter has none."""
    meta: dict[str, Any]
    """The request's `params._meta` (traceparent/tracestate when the client propagates a trace)."""
    request_key: RequestKey | None
    session_id: str
    client_id: str
    trace_id: str
    protocol_version: str
    transport: str | None
    """What the adapter calls its transport: "stdio", "http", "rest", "ws"."""


@attrs.frozen(kw_only=True)
class ObservedOutcome:
    """How an observed request ended."""

    outcome: str
    """OUTCOME_OK, OUTCOME_TOOL_ERROR, OUTCOME_ERROR or OUTCOME_CANCELLED."""
    error_code: SemanticCode | None
    """The rejection's semantic code (OUTCOME_ERROR, OUTCOME_CANCELLED), or `invalid_params` for a tool error
    that is an argument refusal answered as a result (2025-11-25 on, SEP-1303); None otherwise."""
    event_id: str | None
    """The eventId of the rejection, or of a tool error (its `_meta["io.hexmcp/eventId"]`), as the client
    received it; None for other results."""
    duration_s: float
    """From the start of serving to the outcome (monotonic clock)."""
    result: dict[str, Any] | None
    """The wire result for OUTCOME_OK and OUTCOME_TOOL_ERROR (read-only: it is what the client gets)."""


@attrs.frozen(kw_only=True)
class ObservedSession:
    """A session its adapter closed (connection or HTTP session ended): for session-duration metrics.
    `handshake` False: no initialize was served in it (a per-request session of the stateless eras)."""

    session_id: str
    client_id: str
    transport: str | None
    protocol_version: str | None
    handshake: bool
    duration_s: float


@attrs.frozen(kw_only=True)
class ObservedRefusal:
    """A request turned away before a handler ran: by the core's admission (unknown method, lifecycle,
    protocol version) or by an adapter before the core saw it (a gate, a cap, a body too large, bytes that
    are not JSON-RPC). What is not known where it was refused is None."""

    event_id: str
    """The eventId the client was told (and the log line carries)."""
    code: SemanticCode
    message: str
    transport: str | None
    session_id: str | None = None
    client_id: str | None = None
    trace_id: str | None = None
    method: str | None = None
    params: Any = None
    request_key: RequestKey | None = None
    http_method: str | None = None
    path: str | None = None
    body_bytes: int | None = None
    reason: str | None = None
    """Why a connection was refused before a request reached the app (`http/connection_refusals.py`)."""
    http_status: int | None = None
    """The status the connection was answered with; None when it was closed unanswered."""
    suppressed: int | None = None
    """Refusals of the same peer and reason not written since its last line (rate-limited)."""
    suppressed_elsewhere: int | None = None
    """Refusals not written whose peer was forgotten (the table of peers is bounded)."""


class RequestScope(Protocol):
    def request_finished(self, outcome: ObservedOutcome) -> None:
        """The request ended. Called exactly once, in the task that served it; must not raise."""


class RequestObserver(Protocol):
    def request_started(self, request: ObservedRequest) -> RequestScope | None:
        """A request starts being served. Return a scope to hear how it ends (or None not to).

        Raise `ProtocolError` to refuse it (a rate limit: `ErrorCode.RATE_LIMITED`); then no scope of any
        observer registered after this one is opened, and those opened before it are finished with the
        refusal.
        """

    def session_ended(self, session: ObservedSession) -> None:
        """A session closed. Must not raise."""

    # Optional: `request_refused(refusal: ObservedRefusal) -> None` hears the requests refused before a
    # handler ran (`report_refusal`); an observer without it is not asked (the limits and telemetry).


def hears_refusals(observer: RequestObserver) -> bool:
    return callable(getattr(observer, "request_refused", None))


def report_refusal(observers: list[RequestObserver], refusal: ObservedRefusal) -> None:
    """Tell every observer that hears refusals about `refusal`; one failing never stops the others."""
    for observer in observers:
        heard = getattr(observer, "request_refused", None)
        if heard is None:
            continue
        try:
            heard(refusal)
        except Exception:
            log.exception("refusal observer failed", eventId=refusal.event_id)


def request_target(method: str, params: Any) -> str | None:
    """The name the conventions put in a span name and a metric label: the tool, the prompt, or the URI."""
    if not isinstance(params, dict):
        return None
    key = _TARGET_KEYS.get(method)
    value = params.get(key) if key else None
    return value if isinstance(value, str) else None


_TARGET_KEYS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
                "resources/subscribe": "uri", "resources/unsubscribe": "uri"}


def open_scopes(observers: list[RequestObserver], request: ObservedRequest, scopes: list[RequestScope]) -> None:
    """Start `request` with each observer, in order, appending their scopes to `scopes`.

    Raises the `ProtocolError` of an observer that refuses; `scopes` then holds those opened before it,
    for `finish_scopes` to close with the refusal."""
    for observer in observers:
        scope = observer.request_started(request)
        if scope is not None:
            scopes.append(scope)


def finish_scopes(scopes: list[RequestScope], outcome: Ok | Rejection | None, duration_s: float) -> None:
    """Tell each scope how its request ended, the last opened first (so context each made current unwinds
    in order). `outcome` None: the serving task was cancelled (shutdown, disconnect) before an outcome."""
    observed = observed_outcome(outcome, duration_s)
    for scope in reversed(scopes):
        try:
            scope.request_finished(observed)
        except Exception:  # an observer's bug must not turn an answered request into a failure
            log.exception("request observer failed", eventId=outcome.event_id if isinstance(outcome, Rejection) else None)


def observed_outcome(outcome: Ok | Rejection | None, duration_s: float) -> ObservedOutcome:
    if outcome is None:
        return ObservedOutcome(outcome=OUTCOME_CANCELLED, error_code=ErrorCode.REQUEST_CANCELLED, event_id=None,
                               duration_s=duration_s, result=None)
    if isinstance(outcome, Rejection):
        kind = OUTCOME_CANCELLED if outcome.code is ErrorCode.REQUEST_CANCELLED else OUTCOME_ERROR
        return ObservedOutcome(outcome=kind, error_code=outcome.code, event_id=outcome.event_id,
                               duration_s=duration_s, result=None)
    if outcome.result.get("isError") is True:
        # A tool error names its eventId in `_meta` (the core's tool failures, the gateway's): the audit line
        # and the span carry that one, which the client got and the log line about the failure names.
        meta = outcome.result.get("_meta")
        event_id = meta.get(META_EVENT_ID) if isinstance(meta, dict) else None
        # An argument refusal answered as a result (2025-11-25 on, SEP-1303) keeps its code where operators
        # count refusals: a client's version must not move the same refusal out of the -32602 counts.
        refused = isinstance(meta, dict) and meta.get(META_ERROR_CODE) == ErrorCode.INVALID_PARAMS.value
        return ObservedOutcome(outcome=OUTCOME_TOOL_ERROR, error_code=ErrorCode.INVALID_PARAMS if refused else None,
                               event_id=event_id if isinstance(event_id, str) else None,
                               duration_s=duration_s, result=outcome.result)
    return ObservedOutcome(outcome=OUTCOME_OK, error_code=None, event_id=None, duration_s=duration_s, result=outcome.result)


def end_session(observers: list[RequestObserver], session: ObservedSession) -> None:
    for observer in observers:
        try:
            observer.session_ended(session)
        except Exception:
            log.exception("session observer failed", sessionId=session.session_id)
