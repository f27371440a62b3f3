"""Turns uvicorn's traceback for an invalid UTF-8 text frame into one warning line.

The client already gets the right answer from uvicorn: close code 1007 (invalid frame payload).
But uvicorn logs it at ERROR with a `UnicodeDecodeError` traceback, which reads like a server bug
and floods logs when a client misbehaves in a loop. The record is rewritten, not dropped, so
operators still see that a client sent bad frames.
"""

from __future__ import annotations

import logging

from ..http.uvicorn_fence import INVALID_UTF8_MESSAGE, UVICORN_ERROR_LOGGER


class InvalidUtf8Filter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage() == INVALID_UTF8_MESSAGE:
            record.msg, record.args = "invalid UTF-8 in a WebSocket text frame; closed with 1007", ()
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info, record.exc_text = None, None
        return True


def install_invalid_utf8_filter() -> None:
    logger = logging.getLogger(UVICORN_ERROR_LOGGER)
    if not any(isinstance(f, InvalidUtf8Filter) for f in logger.filters):
        logger.addFilter(InvalidUtf8Filter())
