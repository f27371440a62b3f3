"""The audit observer: one line per finished tools/call (refusals included), written as the call ends.

The line is written directly from the event loop, not handed to a thread: an append to the page cache
is cheap, and writing it at once is what lets a crash
lose at most the line being written, where a queue would lose everything still queued. A failing write
(a full disk) is counted and logged, never raised: the client's answer does not depend on the audit.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import structlog

from hexmcp.core.ids import new_event_id
from hexmcp.core.observation import ObservedOutcome, ObservedRequest, ObservedSession

from .log_file import AuditFile
from .record import Redaction, audit_record, encode_line

log = structlog.get_logger("hexmcp.audit")

Versions = Callable[[], Mapping[str, Any]]
"""The versions of what answers tool calls (model, index), asked for each line: an index is rebuilt live."""


class AuditLog:
    def __init__(self, file: AuditFile, redaction: Redaction, versions: Versions = dict) -> None:
        self.file = file
        self.redaction = redaction
        self.versions = versions
        self.lines = 0
        self.failures = 0

    def request_started(self, request: ObservedRequest) -> _CallScope | None:
        return _CallScope(self, request) if request.method == "tools/call" else None

    def session_ended(self, session: ObservedSession) -> None:
        return None

    def record(self, request: ObservedRequest, outcome: ObservedOutcome) -> None:
        event_id = outcome.event_id or new_event_id()
        try:
            versions = self.versions()
        except Exception:  # a tool's describe() failing mid-reload must not lose the line
            log.exception("audit versions unavailable", eventId=event_id)
            versions = {}
        line = encode_line(audit_record(request, outcome, event_id=event_id, redaction=self.redaction,
                                        versions=versions))
        try:
            self.file.append(line)
        except OSError as error:
            self.failures += 1
            log.error("audit line not written", eventId=event_id, path=self.file.path, reason=str(error),
                      failures=self.failures)
            return
        self.lines += 1

    def close(self) -> None:
        self.file.close()


class _CallScope:
    __slots__ = ("audit", "request")

    def __init__(self, audit: AuditLog, request: ObservedRequest) -> None:
        self.audit = audit
        self.request = request

    def request_finished(self, outcome: ObservedOutcome) -> None:
        self.audit.record(self.request, outcome)
