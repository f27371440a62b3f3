"""core/log.py: records from the standard `logging` module (uvicorn's, onnxruntime's) come out in the
same JSON as structlog's own, with the bound correlation ids; a library's records below warning only
with --log-level debug."""

from __future__ import annotations

import json
import logging
import threading

import pytest
import structlog

from hexmcp.core.log import configure_logging, quiet_libraries


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


def _events(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [json.loads(line)["event"] for line in capsys.readouterr().err.splitlines()]


def test_a_librarys_info_records_are_shown_only_at_debug(capsys, restore_logging) -> None:
    """onnxruntime's quantiser logs its per-node notes with `logging.info`, on the root logger."""
    configure_logging("info", json_output=True)
    logging.info('Quantization parameters for tensor:"mul_20" not specified')
    logging.getLogger("markdown_it").setLevel(logging.DEBUG)
    logging.getLogger("markdown_it").info("a library's own logger, its level lowered: still not shown")
    logging.getLogger("third.party").warning("a library's warning")
    logging.getLogger("hexmcp.somewhere").info("hexmcp's own record")
    structlog.get_logger("hexmcp").info("hexmcp's own line")
    assert _events(capsys) == ["a library's warning", "hexmcp's own record", "hexmcp's own line"]

    configure_logging("debug", json_output=True)
    logging.info('Quantization parameters for tensor:"mul_20" not specified')
    assert _events(capsys) == ['Quantization parameters for tensor:"mul_20" not specified']


def test_quiet_libraries_drops_the_librarys_warnings_of_its_own_thread_only(capsys, restore_logging) -> None:
    configure_logging("info", json_output=True)
    with quiet_libraries():
        logging.warning("Please consider to run pre-processing before quantization.")
        thread = threading.Thread(target=lambda: logging.warning("another thread's warning"))
        thread.start()
        thread.join()
        logging.error("a library's error")
        structlog.get_logger("hexmcp").info("converting")
    logging.warning("after the block")
    assert _events(capsys) == ["another thread's warning", "a library's error", "converting", "after the block"]
