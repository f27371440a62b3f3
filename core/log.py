"""structlog set-up: everything to stderr, JSON when stderr is not a terminal.

stdout belongs to the protocol in stdio mode, so no log line may ever go there. sessionId and traceId
are bound per request by the adapters (`bind_request_ids`), eventId by whoever mints it. Records from
the standard `logging` module (uvicorn, onnxruntime's quantiser) go through the same renderer, so an
operator's log parser sees one format.

Libraries log their internals at info (onnxruntime's quantiser writes dozens of lines per model conversion,
through the root logger): below warning, a library's records are shown only with `--log-level debug`.
hexmcp's own lines are structlog's, so they are not affected.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from contextvars import ContextVar
from typing import Any, Iterator

import structlog

# The ids of the request being served, set once per request (one ContextVar.set) and written into a line
# only when one is logged: binding them as two structlog context variables would add
# work to every request, for a server that logs almost nothing per request.
_REQUEST_IDS: ContextVar[tuple[str, str] | None] = ContextVar("hexmcp_request_ids", default=None)


def bind_request_ids(session_id: str, trace_id: str) -> None:
    """Every line logged from here on in this context (and in tasks spawned from it) carries these ids,
    until the next request binds its own. Ids bound as structlog context variables take precedence."""
    _REQUEST_IDS.set((session_id, trace_id))


set_request_ids = _REQUEST_IDS.set
"""`bind_request_ids` for the hot path: `set_request_ids((session_id, trace_id))` is one C call."""


def current_request_ids() -> tuple[str | None, str | None]:
    """The (sessionId, traceId) a line logged here would carry: structlog's bound context variables
    first, then the ids the adapter bound for the request (`bind_request_ids`)."""
    bound = structlog.contextvars.get_contextvars()
    ids = _REQUEST_IDS.get() or (None, None)
    return bound.get("sessionId", ids[0]), bound.get("traceId", ids[1])


def add_request_ids(_logger: Any, _method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    """The processor that writes the bound request ids into a line (after structlog's own context)."""
    ids = _REQUEST_IDS.get()
    if ids is not None:
        event_dict.setdefault("sessionId", ids[0])
        event_dict.setdefault("traceId", ids[1])
    return event_dict


OWN_LOGGERS = "hexmcp"
"""The prefix of the standard-library loggers whose records are hexmcp's, not a library's."""
_quieted = threading.local()  # `below`: the level under which this thread's library records are dropped


class LibraryRecords(logging.Filter):
    """Lets a library's record through at `threshold` and above (DEBUG: every record), and above what
    `quiet_libraries` asks for in the thread that logs it; hexmcp's own records always pass."""

    def __init__(self, threshold: int) -> None:
        super().__init__()
        self.threshold = threshold

    def filter(self, record: logging.LogRecord) -> bool:
        if self.threshold <= logging.DEBUG or record.name.startswith(OWN_LOGGERS):
            return True
        return record.levelno >= max(self.threshold, getattr(_quieted, "below", 0))


@contextlib.contextmanager
def quiet_libraries(below: int = logging.ERROR) -> Iterator[None]:
    """While the block runs, drop this thread's library records below `below` (but with --log-level
    debug): for a library call whose warnings hexmcp has weighed and answered already."""
    previous = getattr(_quieted, "below", 0)
    _quieted.below = max(previous, below)
    try:
        yield
    finally:
        _quieted.below = previous


def configure_logging(level: str = "info", json_output: bool | None = None) -> None:
    if json_output is None:
        json_output = not sys.stderr.isatty()
    numeric = logging.getLevelName(level.upper())
    renderer = structlog.processors.JSONRenderer() if json_output else structlog.dev.ConsoleRenderer(colors=False)
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(LibraryRecords(numeric if numeric <= logging.DEBUG else max(numeric, logging.WARNING)))
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[
                structlog.contextvars.merge_contextvars,
                add_request_ids,
                structlog.stdlib.add_log_level,
                structlog.stdlib.add_logger_name,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
            ],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    logging.basicConfig(handlers=[handler], level=numeric, force=True)
    # A library's `warnings.warn` went to stderr as raw text over several lines (the source line below the
    # message), which a JSON-lines reader cannot parse: as records of `py.warnings` they are lines like any.
    logging.captureWarnings(True)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            add_request_ids,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        # One write per line: `print` writes the line and its newline apart when stderr is not a terminal
        # (Python's stderr then writes through), so the lines of `serve --workers N`, which share one stderr,
        # came out as two JSON objects on one line when two workers logged at once (their drain lines did).
        logger_factory=structlog.WriteLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
