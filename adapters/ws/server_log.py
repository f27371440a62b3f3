"""Turns uvicorn's traceback for an invalid UTF-8 text frame into one warning line, and drops its error
about an unfinished handshake after an upgrade the app refused over HTTP.

The client already gets the right answer from uvicorn: close code 1007 (invalid frame payload).
But uvicorn logs it at ERROR with a `UnicodeDecodeError` traceback, which reads like a server bug
and floods logs when a client misbehaves in a loop. The record is rewritten, not dropped, so
operators still see that a client sent bad frames.

An upgrade refused with an HTTP answer (401, 403, 404, 429...) is already logged by the app, under the
eventId the client got; uvicorn then adds "ASGI callable returned without completing handshake." at ERROR
(its flag is set only by accept and close), a line that reads like a server bug and names no request.
"""

from __future__ import annotations

import logging

from ..http.uvicorn_fence import INVALID_UTF8_MESSAGE, UNFINISHED_HANDSHAKE_MESSAGE, UPGRADE_ANSWERED, UVICORN_ERROR_LOGGER


class InvalidUtf8Filter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage() == INVALID_UTF8_MESSAGE:
            record.msg, record.args = "invalid UTF-8 in a WebSocket text frame; closed with 1007", ()
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info, record.exc_text = None, None
        elif UPGRADE_ANSWERED.get() is not None and record.getMessage() == UNFINISHED_HANDSHAKE_MESSAGE:
            return False  # the app answered the upgrade and logged it (see the module's docstring)
        return True


def install_invalid_utf8_filter() -> None:
    logger = logging.getLogger(UVICORN_ERROR_LOGGER)
    if not any(isinstance(f, InvalidUtf8Filter) for f in logger.filters):
        logger.addFilter(InvalidUtf8Filter())
