"""What one audit line says: pure functions from observed values to a JSON object, one per kind of line.

Kinds (`kind`): `request` (every MCP method the core served or refused at admission, on every
transport), `refusal` (turned away by an adapter before the core saw it: a gate, a cap, a body too large,
bytes that are not JSON-RPC), `task` (how a task ended: completed, failed, cancelled) and `docs` (a read
of the `/docs/` route). Every line has time, eventId, sessionId, traceId, client (salted: salt.py) and
transport, where known.

Params are untrusted JSON from the client, written whole so the request can be rebuilt and replayed
(`reader.replay_request`); secret-looking fields are replaced at any depth before anything is written
(such a request can be rebuilt, but not replayed as sent). There is no size cap: the transports bound a
request already (ADR 1131 says why no digest and no side file).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterable, Mapping

import attrs
import orjson

if TYPE_CHECKING:
    from hexmcp.adapters.http.docs import DocsRead

    from .salt import ClientIds

from hexmcp.core.observation import (OUTCOME_CANCELLED, OUTCOME_ERROR, OUTCOME_OK, OUTCOME_TOOL_ERROR,
                                     ObservedOutcome, ObservedRefusal, ObservedRequest)
from hexmcp.core.tasks.model import TaskRecord, TaskStatus

REDACTED = "[REDACTED]"
DEFAULT_REDACTED = ("token", "password", "api_key", "secret", "authorization")
"""Always redacted, besides the operator's `--audit-redact` fields."""
SCHEMA = 2
"""`schema` of the lines written now: 1 (no `schema`) logged only tools/call, with `arguments` capped at 8 KiB."""

_SEPARATORS = re.compile(r"[-_.\s]")
_KNOWN_KEYS = 4096


def _normal(name: str) -> str:
    """`apiKey`, `API-KEY` and `api_key` are one field to an operator."""
    return _SEPARATORS.sub("", name).lower()


@attrs.frozen
class Redaction:
    """Field names whose values never reach the log: a key matches when it is one of them or ends with one
    (`access_token`, `db_password`), ignoring case, `-`, `_` and `.`. So `max_tokens` is kept."""

    names: tuple[str, ...] = attrs.field(converter=lambda names: tuple(sorted({_normal(n) for n in names if n})))

    @classmethod
    def with_defaults(cls, extra: Iterable[str] = ()) -> Redaction:
        return cls((*DEFAULT_REDACTED, *extra))

    _known: dict[str, bool] = attrs.field(factory=dict, init=False, eq=False, repr=False)
    """Answers so far: argument names repeat from call to call, and the normalising regex is the cost."""

    def hides(self, key: str) -> bool:
        known = self._known.get(key)
        if known is None:
            if len(self._known) >= _KNOWN_KEYS:
                self._known.clear()  # clients choose the keys: the cache must not grow without end
            normal = _normal(key)
            known = self._known[key] = any(normal.endswith(name) for name in self.names)
        return known

    def apply(self, value: Any) -> Any:
        """`value` with every matching key's value replaced, in objects at any depth (lists included)."""
        if isinstance(value, dict):
            return {key: REDACTED if isinstance(key, str) and self.hides(key) else self.apply(item)
                    for key, item in value.items()}
        if isinstance(value, list):
            return [self.apply(item) for item in value]
        return value


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no whitespace, UTF-8: the same result always digests the same."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def digest(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(value)).hexdigest()


def _now(now: datetime | None) -> str:
    when = now or datetime.now(timezone.utc)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _common(kind: str, event_id: str, *, transport: str | None, session_id: str | None, trace_id: str | None,
            client: str | None, now: datetime | None) -> dict[str, Any]:
    return {"time": _now(now), "schema": SCHEMA, "kind": kind, "eventId": event_id, "sessionId": session_id,
            "traceId": trace_id, "client": client, "transport": transport}


def request_record(request: ObservedRequest, outcome: ObservedOutcome, *, event_id: str, redaction: Redaction,
                   clients: ClientIds, versions: Mapping[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """The line of one finished request (`event_id`: the outcome's, else one minted for it)."""
    result = outcome.result
    line = _common("request", event_id, transport=request.transport, session_id=request.session_id,
                   trace_id=request.trace_id, client=clients.of(request.client_id), now=now)
    line.update({
        "method": request.method,
        "target": request.target,
        "tool": request.target if request.method == "tools/call" else None,
        "requestId": request.request_key,
        "protocolVersion": request.protocol_version,
        "params": redaction.apply(request.params),
        "outcome": outcome.outcome,
        "errorCode": outcome.error_code.value if outcome.error_code is not None else None,
        "durationMs": round(outcome.duration_s * 1000, 3),
        "resultDigest": digest(result) if result is not None else None,
        "versions": dict(versions),
    })
    if result is not None and result.get("resultType") == "task":  # the task it created: its own line ends it
        line["taskId"] = result.get("taskId")
    return line


def refusal_record(refusal: ObservedRefusal, *, redaction: Redaction, clients: ClientIds,
                   now: datetime | None = None) -> dict[str, Any]:
    """The line of a request refused before a handler ran (by the core's admission or by an adapter)."""
    line = _common("refusal", refusal.event_id, transport=refusal.transport, session_id=refusal.session_id,
                   trace_id=refusal.trace_id, client=clients.of(refusal.client_id), now=now)
    line.update({
        "method": refusal.method,
        "tool": refusal.params.get("name") if refusal.method == "tools/call" and isinstance(refusal.params, dict)
        else None,
        "requestId": refusal.request_key,
        "params": redaction.apply(refusal.params),
        "httpMethod": refusal.http_method,
        "path": refusal.path,
        "bodyBytes": refusal.body_bytes,
        "outcome": OUTCOME_ERROR,
        "errorCode": refusal.code.value,
        "message": refusal.message,
    })
    if refusal.reason is not None:  # a connection refused before the app saw a request (ADR 1131, amendment)
        line.update({"reason": refusal.reason, "httpStatus": refusal.http_status,
                     "suppressed": refusal.suppressed or 0, "suppressedElsewhere": refusal.suppressed_elsewhere or 0})
    return line


_TASK_OUTCOMES = {TaskStatus.FAILED: OUTCOME_ERROR, TaskStatus.CANCELLED: OUTCOME_CANCELLED}


def task_record(record: TaskRecord, *, event_id: str, session_id: str | None, trace_id: str | None,
                clients: ClientIds, now: datetime | None = None) -> dict[str, Any]:
    """The line of a task that ended; `session_id`/`trace_id`: those of the request that created it."""
    line = _common("task", event_id, transport=None, session_id=session_id, trace_id=trace_id,
                   client=clients.of(record.owner), now=now)
    outcome = _TASK_OUTCOMES.get(record.status)
    if outcome is None:
        outcome = OUTCOME_TOOL_ERROR if (record.result or {}).get("isError") is True else OUTCOME_OK
    error_code = None
    if isinstance(record.error, dict) and isinstance(record.error.get("data"), dict):
        error_code = record.error["data"].get("errorCode")
    line.update({
        "taskId": record.task_id,
        "status": record.status.value,
        "outcome": outcome,
        "errorCode": error_code if record.status is TaskStatus.FAILED else
        ("request_cancelled" if record.status is TaskStatus.CANCELLED else None),
        "message": record.status_message,
        "error": record.error,
        "durationMs": round((record.last_updated_at - record.created_at) * 1000, 3),
        "resultDigest": digest(record.result) if record.result is not None else None,
    })
    return line


def docs_record(read: DocsRead, *, event_id: str, clients: ClientIds, now: datetime | None = None) -> dict[str, Any]:
    """The line of one request to the `/docs/` route."""
    line = _common("docs", event_id, transport="http", session_id=None, trace_id=read.trace_id,
                   client=clients.of(read.client_id), now=now)
    line.update({
        "httpMethod": read.http_method,
        "path": read.path,
        "documentId": read.document_id,
        "status": read.status,
        "bytes": read.bytes,
        "outcome": OUTCOME_OK if read.status < 400 else OUTCOME_ERROR,
        "durationMs": round(read.duration_s * 1000, 3),
    })
    return line


def encode_line(record: Mapping[str, Any]) -> bytes:
    """One line: orjson never writes a raw newline inside a value, so the only b"\\n" is the last byte."""
    return orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS) + b"\n"
