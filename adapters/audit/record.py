"""What one audit line says about a tool call: pure functions from observed values to a JSON object.

Arguments are untrusted JSON from the client; secret-looking fields are replaced at any depth before
anything is written, and an oversized argument object is replaced by its size and digest so one line
stays small enough to be appended in one piece (log_file.py says why that matters).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping

import attrs
import orjson

from hexmcp.core.observation import ObservedOutcome, ObservedRequest

REDACTED = "[REDACTED]"
DEFAULT_REDACTED = ("token", "password", "api_key", "secret", "authorization")
"""Always redacted, besides the operator's `--audit-redact` fields."""
MAX_ARGUMENTS_BYTES = 8 * 1024
"""Larger argument objects are logged as their size and sha256: an audit line stays well under a page."""

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


def logged_arguments(arguments: Any, redaction: Redaction) -> Any:
    redacted = redaction.apply(arguments)
    size = len(canonical_json(redacted))
    if size <= MAX_ARGUMENTS_BYTES:
        return redacted
    return {"omitted": "too large", "bytes": size, "digest": digest(redacted)}


def audit_record(request: ObservedRequest, outcome: ObservedOutcome, *, event_id: str, redaction: Redaction,
                 versions: Mapping[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """The audit line of one finished tools/call (`event_id`: the outcome's, else one minted for it)."""
    when = now or datetime.now(timezone.utc)
    return {
        "time": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "eventId": event_id,
        "sessionId": request.session_id,
        "traceId": request.trace_id,
        "client": request.client_id,
        "transport": request.transport,
        "tool": request.target,
        "arguments": logged_arguments(request.arguments, redaction),
        "outcome": outcome.outcome,
        "errorCode": outcome.error_code.value if outcome.error_code is not None else None,
        "durationMs": round(outcome.duration_s * 1000, 3),
        "resultDigest": digest(outcome.result) if outcome.result is not None else None,
        "versions": dict(versions),
    }


def encode_line(record: Mapping[str, Any]) -> bytes:
    """One line: orjson never writes a raw newline inside a value, so the only b"\\n" is the last byte."""
    return orjson.dumps(record) + b"\n"
