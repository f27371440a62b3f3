"""core/log.py: records from the standard `logging` module (uvicorn's, onnxruntime's) come out in the
same JSON as structlog's own, with the bound correlation ids."""

from __future__ import annotations

import json
import logging

import pytest
import structlog

from hexmcp.core.log import configure_logging


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    config = structlog.get_config()
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.configure(**config)
    structlog.contextvars.clear_contextvars()


def test_stdlib_records_are_json_with_bound_ids(capsys, restore_logging) -> None:
    configure_logging("info", json_output=True)
    structlog.contextvars.bind_contextvars(sessionId="s-1")
    logging.getLogger("third.party").warning("port %d busy", 8090)
    try:
        raise ZeroDivisionError("boom")
    except ZeroDivisionError:
        logging.getLogger("somewhere").exception("it failed")
    logging.getLogger("chatty").debug("below the level: not shown")
    structlog.get_logger("hexmcp").info("native", eventId="e-1")

    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert len(lines) == 3
    first, second, third = lines
    assert {k: first[k] for k in ("event", "level", "logger", "sessionId")} == {
        "event": "port 8090 busy", "level": "warning", "logger": "third.party", "sessionId": "s-1"
    }
    assert "timestamp" in first
    assert second["level"] == "error" and "ZeroDivisionError: boom" in second["exception"]
    assert third["event"] == "native" and third["eventId"] == "e-1" and third["sessionId"] == "s-1"
