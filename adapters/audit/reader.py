"""Reading an audit trail back: the rotated files oldest first, every line parsed or reported, filters.

A line that is not a JSON object ending in a newline is not skipped silently: it is yielded as a
`BadLine` naming its file and line number, so a reader always learns what a crash or a full disk cut.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import attrs
import orjson

from .record import REDACTED


@attrs.frozen(kw_only=True)
class BadLine:
    path: str
    line_number: int
    size: int
    reason: str
    """"no newline" (the last line, cut while being written) or "not a JSON object"."""


@attrs.frozen(kw_only=True)
class AuditFilter:
    session: str | None = None
    tool: str | None = None
    outcome: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    method: str | None = None
    kind: str | None = None
    event: str | None = None

    def accepts(self, record: dict[str, Any]) -> bool:
        if self.session is not None and record.get("sessionId") != self.session:
            return False
        if self.tool is not None and record.get("tool") != self.tool:
            return False
        if self.method is not None and _method(record) != self.method:
            return False
        if self.kind is not None and record.get("kind", "request") != self.kind:
            return False
        if self.event is not None and record.get("eventId") != self.event:
            return False
        if self.outcome is not None and record.get("outcome") != self.outcome:
            return False
        if self.since is None and self.until is None:
            return True
        when = record_time(record)
        if when is None:
            return False
        return (self.since is None or when >= self.since) and (self.until is None or when < self.until)


def parse_time(text: str) -> datetime:
    """An ISO 8601 time; without a zone it is UTC (the log's own zone). Raises ValueError."""
    when = datetime.fromisoformat(text.strip())  # 3.11 reads a trailing Z too
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def record_time(record: dict[str, Any]) -> datetime | None:
    text = record.get("time")
    if not isinstance(text, str):
        return None
    try:
        return parse_time(text)
    except ValueError:
        return None


def trail_files(path: str | Path) -> list[Path]:
    """`FILE.N`, ..., `FILE.1`, `FILE`: oldest first, as rotation left them (missing ones skipped)."""
    base = Path(path)
    numbered = re.compile(re.escape(base.name) + r"\.(\d+)")
    rotated = sorted(((int(m.group(1)), p) for p in base.parent.glob(base.name + ".*")
                      if (m := numbered.fullmatch(p.name))), reverse=True)
    return [p for _, p in rotated] + ([base] if base.exists() else [])


def read_trail(path: str | Path) -> Iterator[dict[str, Any] | BadLine]:
    """Every line of the trail at `path`, oldest file first: a record, or a BadLine where it cannot be."""
    for file in trail_files(path):
        yield from read_file(file)


def read_file(file: Path) -> Iterator[dict[str, Any] | BadLine]:
    data = file.read_bytes()
    lines = data.split(b"\n")
    last = lines.pop()  # b"" when the file ends with a newline, as every whole line does
    for number, line in enumerate(lines, 1):
        if not line:
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            record = None
        if isinstance(record, dict):
            yield record
        else:
            yield BadLine(path=str(file), line_number=number, size=len(line), reason="not a JSON object")
    if last:
        yield BadLine(path=str(file), line_number=len(lines) + 1, size=len(last), reason="no newline")


def _method(record: dict[str, Any]) -> str | None:
    """A line's method; a line of schema 1 was always a tools/call."""
    if "schema" not in record and "tool" in record:
        return "tools/call"
    method = record.get("method")
    return method if isinstance(method, str) else None


class NotReplayable(Exception):
    """A line from which the request cannot be rebuilt as it was sent (the message says why)."""


def replay_request(record: dict[str, Any]) -> dict[str, Any]:
    """The JSON-RPC request a `request` or `refusal` line records, as the client sent it: same id, method
    and params. Raises NotReplayable for a line that is no request, whose params the trail did not keep
    (a schema-1 line over 8 KiB: only its digest), or whose params had secrets redacted."""
    method = _method(record)
    if method is None:
        raise NotReplayable(f"line {record.get('eventId')} ({record.get('kind', 'request')}) records no request")
    if "schema" in record:
        params = record.get("params")
    else:  # schema 1: only tools/call, with the arguments alone
        arguments = record.get("arguments")
        if isinstance(arguments, dict) and arguments.get("omitted") == "too large":
            raise NotReplayable(f"line {record.get('eventId')} kept only a digest of its arguments ({arguments.get('bytes')} bytes)")
        params = {"name": record.get("tool"), "arguments": arguments}
    hidden = list(_redacted_paths(params, "$.params"))
    if hidden:
        raise NotReplayable(f"line {record.get('eventId')} had secrets redacted at {', '.join(hidden[:5])}")
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": record.get("requestId"), "method": method}
    if params is not None:
        request["params"] = params
    return request


def _redacted_paths(value: Any, path: str) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if item == REDACTED:
                yield f"{path}.{key}"
            else:
                yield from _redacted_paths(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _redacted_paths(item, f"{path}[{index}]")
