"""The audit observer: one line per request on every transport (refusals included), per ended task, per
`/docs/` read, written as each ends.

A line is written directly from the event loop, not handed to a thread: an append to the page cache
is cheap, and writing it at once is what lets a crash lose at most the line being written, where a queue
would lose everything still queued. A failing write (a full disk) is counted and logged, never raised:
the client's answer does not depend on the audit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping

import structlog

from hexmcp.core.ids import new_event_id
from hexmcp.core.log import current_request_ids
from hexmcp.core.observation import ObservedOutcome, ObservedRefusal, ObservedRequest, ObservedSession
from hexmcp.core.tasks.model import TaskRecord

from .log_file import AuditFile
from .record import Redaction, docs_record, encode_line, refusal_record, request_record, task_record
from .salt import ClientIds

if TYPE_CHECKING:
    from hexmcp.adapters.http.docs import DocsRead

log = structlog.get_logger("hexmcp.audit")

Versions = Callable[[], Mapping[str, Any]]
"""The versions of what answers tool calls (model, index), asked for each line: an index is rebuilt live."""


class AuditLog:
    def __init__(self, file: AuditFile, redaction: Redaction, versions: Versions = dict, *,
                 clients: ClientIds) -> None:
        self.file = file
        self.redaction = redaction
        self.versions = versions
        self.clients = clients
        self.lines = 0
        self.failures = 0
        # Running tasks' creating request (session, trace): one entry per task this process runs, removed
        # when it ends (shutdown ends them all), so it is bounded by the per-client task caps.
        self._task_origins: dict[str, tuple[str | None, str | None]] = {}

    # --- the observation port (core/observation.py) ------------------------------------------------

    def request_started(self, request: ObservedRequest) -> _RequestScope:
        return _RequestScope(self, request)

    def session_ended(self, session: ObservedSession) -> None:
        return None

    def request_refused(self, refusal: ObservedRefusal) -> None:
        self._write(refusal_record(refusal, redaction=self.redaction, clients=self.clients), refusal.event_id)

    # --- what the composition root hands over besides ---------------------------------------------

    def task_changed(self, record: TaskRecord) -> None:
        """A task's record was written (`McpServer.on_task_change`): an ended one gets its line. Called in
        the task's own asyncio task, which carries the ids of the request that created it."""
        if not record.terminal:
            return
        origin = self._task_origins.pop(record.task_id, None)
        if origin is None:  # created before this observer, or its line failed: the ids the task's context carries
            origin = current_request_ids()
        event_id = _event_id_of(record.error) or new_event_id()
        self._write(task_record(record, event_id=event_id, session_id=origin[0], trace_id=origin[1],
                                clients=self.clients), event_id)

    def docs_read(self, read: DocsRead) -> None:
        event_id = new_event_id()
        self._write(docs_record(read, event_id=event_id, clients=self.clients), event_id)

    def record(self, request: ObservedRequest, outcome: ObservedOutcome) -> None:
        event_id = outcome.event_id or new_event_id()
        try:
            versions = self.versions()
        except Exception:  # a tool's describe() failing mid-reload must not lose the line
            log.exception("audit versions unavailable", eventId=event_id)
            versions = {}
        line = request_record(request, outcome, event_id=event_id, redaction=self.redaction, clients=self.clients,
                              versions=versions)
        task_id = line.get("taskId")
        if isinstance(task_id, str):  # its ending's line names the request that created it
            self._task_origins[task_id] = (request.session_id, request.trace_id)
        self._write(line, event_id)

    def _write(self, record: Mapping[str, Any], event_id: str) -> None:
        try:
            self.file.append(encode_line(record))
        except (OSError, TypeError) as error:  # TypeError: a value orjson cannot write (never from JSON input)
            self.failures += 1
            log.error("audit line not written", eventId=event_id, path=self.file.path, reason=str(error),
                      failures=self.failures)
            return
        self.lines += 1

    def close(self) -> None:
        self.file.close()


def _event_id_of(error: Any) -> str | None:
    """The eventId a failed task's error carries (the one the client reads from tasks/get), if any."""
    data = error.get("data") if isinstance(error, dict) else None
    event_id = data.get("eventId") if isinstance(data, dict) else None
    return event_id if isinstance(event_id, str) else None


class _RequestScope:
    __slots__ = ("audit", "request")

    def __init__(self, audit: AuditLog, request: ObservedRequest) -> None:
        self.audit = audit
        self.request = request

    def request_finished(self, outcome: ObservedOutcome) -> None:
        self.audit.record(self.request, outcome)
