"""The property suite against a server that hangs (issue 30): every wait has a deadline, so a hung server
fails the property with one clear line instead of stalling the suite (hypothesis would shrink and replay a
plain failure, waiting out every timeout again).

The waits: an answer over stdio or WebSocket, a POST's answer (silent, or trickling an SSE comment now and
then so that no single read ever times out), a write the server never reads, and the property's total time.
End to end: the suite itself, run against a hanging stdio server, finishes in seconds with every property
failed by name."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator
from xml.etree import ElementTree

import pytest

from . import deadlines
from .drivers import HttpDriver, RestDriver, StdioDriver

pytestmark = pytest.mark.timeout(180)
REPO = Path(__file__).resolve().parents[2]
SHORT_S = 1.0


@pytest.fixture
def short_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deadlines, "REQUEST_S", SHORT_S)


@contextlib.contextmanager
def hanging_http(trickle: bool) -> Iterator[str]:
    """An HTTP server that reads each request and never finishes answering it: silent, or sending a 200
    SSE head and then an SSE comment every 0.2 s forever."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            if trickle:
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                             b"transfer-encoding: chunked\r\n\r\n")
            while not stop.wait(0.2):
                if trickle:
                    with contextlib.suppress(OSError):  # the client gave up: that is the point
                        conn.sendall(b"3\r\n:\n\n\r\n")

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                conn, _ = listener.accept()
                threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def _fails_by_its_deadline(call) -> deadlines.ServerHung:
    started = time.monotonic()
    with pytest.raises(deadlines.ServerHung) as raised:
        call()
    assert time.monotonic() - started < SHORT_S + 1.5, "the wait outlived its deadline"
    assert not isinstance(raised.value, Exception), "hypothesis would shrink and replay an Exception"
    return raised.value


@pytest.mark.parametrize("trickle", [False, True], ids=["silent", "trickling"])
def test_a_post_that_is_never_answered_fails_by_its_deadline(short_deadline, trickle: bool) -> None:
    with hanging_http(trickle) as url:
        for driver in (HttpDriver(url), RestDriver(url)):
            error = _fails_by_its_deadline(lambda: driver.request("ping"))
            assert "the server hangs" in str(error) and driver.name in str(error)
            driver.http.close()


def test_an_unanswered_stdio_request_fails_by_its_deadline_with_the_exchange(short_deadline) -> None:
    driver = StdioDriver([sys.executable, "-m", "tests.conformance.hanging_server"])
    try:
        error = _fails_by_its_deadline(lambda: driver.request("ping"))
        assert f"no answer to request id(s) 1 within {SHORT_S:g} s" in str(error)
        assert '>> {"jsonrpc": "2.0", "id": 1, "method": "ping"}' in str(error)  # what went unanswered
    finally:
        driver.process.kill()


def test_a_write_the_server_never_reads_fails_by_its_deadline(short_deadline) -> None:
    driver = StdioDriver(["sleep", "3600"])  # never reads stdin: a large write fills the pipe and blocks
    try:
        error = _fails_by_its_deadline(lambda: driver.raw(b"[" * 1_000_000))
        assert "stopped reading" in str(error)
    finally:
        driver.process.kill()


def test_a_property_past_its_total_deadline_fails_at_the_next_wait() -> None:
    driver = StdioDriver(["sleep", "3600"])
    deadlines.PROPERTY.start("a slow property", 0.5)
    try:
        started = time.monotonic()
        assert driver.receive(5) is None  # cut to what the property has left
        assert time.monotonic() - started < 1.5
        with pytest.raises(deadlines.ServerHung, match="past its .* deadline"):
            driver.receive(5)
    finally:
        deadlines.PROPERTY.stop()
        driver.process.kill()


def test_the_suite_against_a_hanging_server_ends_in_seconds_naming_each_property(tmp_path: Path) -> None:
    results = tmp_path / "results.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout", "120",
               f"--junitxml={results}", "tests/conformance/test_prop_responses.py",
               "tests/conformance/test_prop_schema.py",
               "--target", f"stdio:{sys.executable} -m tests.conformance.hanging_server"]
    env = {**os.environ, "HEXMCP_CONFORMANCE_REQUEST_DEADLINE": "2"}
    started = time.monotonic()
    out = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=150)
    took = time.monotonic() - started
    assert out.returncode == 1, out.stdout + out.stderr
    failures = {case.get("name"): case.find("failure").get("message", "")
                for case in ElementTree.parse(results).iter("testcase") if case.find("failure") is not None}
    assert len(failures) == 3, out.stdout  # every property, each by name
    later = [name for name, message in failures.items() if "hung in an earlier property" in message]
    [first] = [message for name, message in failures.items() if name not in later]  # the one that waited ...
    assert "no answer to request id(s)" in first and "the server hangs" in first, first
    assert len(later) == 2, failures  # ... and the others, failed at once
    assert took < 60, f"the suite took {took:.0f} s against a hanging server"
