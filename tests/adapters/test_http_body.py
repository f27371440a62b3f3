"""Request bodies: read under a deadline before a concurrency slot is taken, refused in the endpoint's own
error shape, and cut short when the server stops. Stalled uploads are raw sockets that send the headers
and one byte of a longer body; every wait here is bounded and polls the server's own state."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from hexmcp.wire import jsonrpc
from hexmcp.core import ErrorCode, versions

from tests.adapters.http_live import live_server
from tests.adapters.http_wire import MODERN
from tests.fixtures.demo_server import build_demo_server
from tests.support.net import free_port

pytestmark = pytest.mark.timeout(40)
TIMEOUT = jsonrpc.ERROR_CODES[ErrorCode.REQUEST_TIMEOUT]


def _stall(port: int, path: str, extra: str = "") -> socket.socket:
    """A POST whose headers promise 100 bytes of body, of which one arrives."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                 f"Accept: application/json, text/event-stream\r\n{extra}Content-Length: 100\r\n\r\n{{".encode())
    return sock


def _answer(sock: socket.socket) -> tuple[int, dict[str, str], dict]:
    """Read one response to its end (the server closes the connection after it)."""
    raw = b""
    while chunk := sock.recv(65536):
        raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, json.loads(body)


def _until(condition: Callable[[], bool], what: str, limit_s: float = 10) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


@pytest.fixture
def stalls() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def test_stalled_uploads_hold_no_concurrency_slot(stalls) -> None:
    with live_server(build_demo_server(), max_concurrent_requests=2, body_timeout_s=30) as live:
        for path in ("/mcp", "/mcp/tools/call", "/mcp", "/mcp/ping"):
            stalls.append(_stall(live.config.port, path))
        _until(lambda: len(live.app.bodies.deadlines) == 4, "the four uploads to be waited on")
        assert live.app.limit.in_flight == 0
        with httpx.Client(base_url=live.base, timeout=10) as http:
            assert [http.post("/mcp/ping").status_code for _ in range(3)] == [200, 200, 200]


@pytest.mark.parametrize("path", ["/mcp", "/mcp/tools/call"])
def test_a_body_that_stops_arriving_gets_408_and_frees_everything(stalls, path) -> None:
    with live_server(build_demo_server(), body_timeout_s=0.2) as live:
        stalls.append(_stall(live.config.port, path))
        status, headers, body = _answer(stalls[0])  # ends: the server closes the connection
        assert status == 408 and headers["connection"] == "close"
        if path == "/mcp":  # JSON-RPC shape
            assert body["error"]["code"] == TIMEOUT and body["error"]["data"]["eventId"]
            assert "0.2 s" in body["error"]["message"]
        else:  # REST shape
            assert body["error"] == ErrorCode.REQUEST_TIMEOUT.value and body["code"] == TIMEOUT and body["eventId"]
        assert len(live.app.bodies.deadlines) == 0 and live.app.limit.in_flight == 0


def test_uploads_still_arriving_at_shutdown_end_at_once(stalls) -> None:
    with live_server(build_demo_server(), body_timeout_s=60) as live:
        stalls.append(_stall(live.config.port, "/mcp/tools/call"))
        _until(lambda: len(live.app.bodies.deadlines) == 1, "the upload to be waited on")
        live._uvicorn.should_exit = True  # what SIGTERM does
        status, _, body = _answer(stalls[0])  # long before the 60 s body deadline
        assert status == 503 and body["error"] == ErrorCode.SERVER_BUSY.value and "shutting down" in body["message"]


# --- the real server: every refusal's eventId is in its log, and SIGTERM with a stalled upload is quiet ---


@pytest.mark.timeout(60)
def test_refusals_are_logged_and_sigterm_with_a_stalled_upload_is_clean() -> None:
    port = free_port()
    env = {**os.environ, "HEXMCP_LOG_LEVEL": "info"}
    process = subprocess.Popen([sys.executable, "-m", "hexmcp.app.cli", "serve", "--no-classifier",
                                "--port", str(port), "--max-body-bytes", "4096", "--body-timeout", "60"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stalled = None
    try:
        base = f"http://127.0.0.1:{port}"
        _until(lambda: _healthy(base), "hexmcp serve to come up", 15)
        with httpx.Client(base_url=base, timeout=10) as http:
            plain = {"content-type": "application/json"}
            modern = {**plain, "accept": "application/json, text/event-stream", "mcp-protocol-version": MODERN}
            rest = [http.post("/mcp/tools/call", content=b"{bad", headers=plain),
                    http.post("/mcp/tools/call", content=b"[" * 2000 + b"]" * 2000, headers=plain),
                    http.post("/mcp/tools/call", content=b" " * 5000, headers=plain),
                    http.get("/mcp/tools/call"),
                    http.post("/mcp/tools/list", json={"_meta": 1}, headers={"mcp-protocol-version": MODERN})]
            assert [r.status_code for r in rest] == [400, 400, 413, 405, 400]
            rpc = [http.post("/mcp", content=b"{bad", headers=modern),
                   http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                             headers={**modern, "mcp-protocol-version": "banana"}),
                   http.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
                             headers=modern)]
            assert [r.status_code for r in rpc] == [400, 400, 400]
            event_ids = [r.json()["eventId"] for r in rest] + [r.json()["error"]["data"]["eventId"] for r in rpc]

            stalled = _stall(port, "/mcp/tools/call")
            assert http.post("/mcp/ping").status_code == 200  # the stalled request has been picked up by now
        process.send_signal(signal.SIGTERM)
        status, _, body = _answer(stalled)
        assert status == 503 and body["eventId"]
        assert process.wait(timeout=15) == 0
        log = process.stderr.read().decode()  # type: ignore[union-attr]
        assert [event_id for event_id in [*event_ids, body["eventId"]] if event_id not in log] == []
        assert "Traceback" not in log and "CancelledError" not in log and "graceful shutdown exceeded" not in log
    finally:
        if stalled is not None:
            stalled.close()
        if process.poll() is None:
            process.kill()
            process.wait()


def _healthy(base: str) -> bool:
    try:
        return httpx.get(f"{base}/health").status_code == 200
    except httpx.TransportError:
        return False


@pytest.mark.parametrize("arrived", [True, False], ids=["whole-body-arrived", "may-still-arrive"])
def test_only_a_body_that_may_still_be_arriving_is_read_under_the_deadline(arrived: bool) -> None:
    """The fence's `body_arrived`: a body already in the server's buffer cannot stall, so no deadline is kept."""
    import asyncio

    from hexmcp.adapters.http.body import BodyBuffer
    from hexmcp.adapters.http.request import HttpRequest

    buffer = BodyBuffer(mcp_path="/mcp", limit=1024, timeout_s=5.0)
    under_deadline: list[int] = []

    async def receive() -> dict[str, object]:
        under_deadline.append(len(buffer.deadlines))
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def main() -> HttpRequest:
        request = HttpRequest({"type": "http", "method": "POST", "path": "/mcp", "headers": []}, body_arrived=arrived)
        assert await buffer.read(request, receive, _never_sent)
        return request

    request = asyncio.run(main())
    assert request.body == b"{}"
    assert under_deadline == [0 if arrived else 1]
    assert len(buffer.deadlines) == 0 and buffer.reading == 0


async def _never_sent(message: object) -> None:
    raise AssertionError(f"nothing is answered for a body read in full: {message}")


def test_under_uvicorn_a_body_sent_whole_is_read_without_a_deadline_and_a_stalled_one_with() -> None:
    """The live half of `body_arrived`: hexmcp's uvicorn protocol marks a body that came in one piece, so
    the app reads it without registering a deadline, while a body still arriving is read under one."""
    with live_server(build_demo_server(), body_timeout_s=0.5) as live:
        deadlines = live.app.bodies.deadlines
        uses: list[bool] = []
        run = deadlines.run

        def recording_run(work, task=None):  # type: ignore[no-untyped-def]
            uses.append(True)
            return run(work, task)

        deadlines.run = recording_run  # type: ignore[method-assign]
        # Head and body in one write, so they reach the parser in one read (an HTTP client may write them
        # apart, and on a busy machine the app then starts before the body is in: that read is timed).
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        whole = socket.create_connection(("127.0.0.1", live.config.port), timeout=10)
        try:
            whole.sendall(f"POST {live.config.path} HTTP/1.1\r\nHost: 127.0.0.1:{live.config.port}\r\n"
                          f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                          f"MCP-Protocol-Version: {versions.LATEST_HANDSHAKE_VERSION}\r\nConnection: close\r\n"
                          f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            status, _, answer = _answer(whole)
        finally:
            whole.close()
        assert status == 200 and answer["result"] == {}
        assert uses == []
        sock = _stall(live.config.port, live.config.path)
        try:
            status, _, _ = _answer(sock)
        finally:
            sock.close()
        assert status == 408 and uses == [True]


def test_a_body_that_arrives_after_its_answer_leaves_the_connection_usable() -> None:
    """An oversized body is refused on its Content-Length, before it arrives; when it does arrive, the app
    has finished with the request, and the next request on the connection is served as usual."""
    with live_server(build_demo_server(), max_body_bytes=4096) as live:
        sock = socket.create_connection(("127.0.0.1", live.config.port), timeout=10)
        try:
            host = f"Host: 127.0.0.1:{live.config.port}\r\n"
            sock.sendall(f"POST /mcp/tools/call HTTP/1.1\r\n{host}Content-Type: application/json\r\n"
                         "Content-Length: 5000\r\n\r\n".encode())
            assert _one_response(sock)[0] == 413
            _until(lambda: live.app.limit.in_flight == 0 and not live.app.bodies.reading, "the app to be done")
            sock.sendall(b" " * 5000 + f"GET /mcp/tools/call HTTP/1.1\r\n{host}\r\n".encode())
            assert _one_response(sock)[0] == 405
        finally:
            sock.close()


def _one_response(sock: socket.socket) -> tuple[int, bytes]:
    """Read one response with a Content-Length from a connection that stays open."""
    raw = b""
    while b"\r\n\r\n" not in raw:
        raw += sock.recv(65536)
    head, _, body = raw.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    while len(body) < length:
        body += sock.recv(65536)
    return int(head.split()[1]), body
