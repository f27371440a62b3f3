"""structlog set-up: everything to stderr, JSON when stderr is not a terminal.

stdout belongs to the protocol in stdio mode, so no log line may ever go there. sessionId, traceId
and eventId are bound with contextvars by whoever knows them (adapters and the core). Records from
the standard `logging` module (uvicorn, onnxruntime's quantiser) go through the same renderer, so an
operator's log parser sees one format.
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure_logging(level: str = "info", json_output: bool | None = None) -> None:
    if json_output is None:
        json_output = not sys.stderr.isatty()
    numeric = logging.getLevelName(level.upper())
    renderer = structlog.processors.JSONRenderer() if json_output else structlog.dev.ConsoleRenderer(colors=False)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[
                structlog.contextvars.merge_contextvars,
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
