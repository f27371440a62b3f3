"""structlog set-up: everything to stderr, JSON when stderr is not a terminal.

stdout belongs to the protocol in stdio mode, so no log line may ever go there. sessionId, traceId
and eventId are bound with contextvars by whoever knows them (adapters and the core).
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure_logging(level: str = "info", json_output: bool | None = None) -> None:
    if json_output is None:
        json_output = not sys.stderr.isatty()
    numeric = logging.getLevelName(level.upper())
    logging.basicConfig(stream=sys.stderr, level=numeric, format="%(message)s", force=True)
    renderer = structlog.processors.JSONRenderer() if json_output else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
