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

    def accepts(self, record: dict[str, Any]) -> bool:
        if self.session is not None and record.get("sessionId") != self.session:
            return False
        if self.tool is not None and record.get("tool") != self.tool:
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
