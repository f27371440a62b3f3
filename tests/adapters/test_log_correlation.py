"""One request can be followed through the logs on every transport: sessionId → traceId → eventId.

Real `hexmcp` processes (`serve` and `stdio`, without the classifier), real clients on their wires, and
the JSON log lines they write to stderr. Each transport gets a request the core rejects (an unknown
tool); the eventId the client receives must name a log line that also carries the request's sessionId
and traceId, and every line of that trace must belong to the same session.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from hexmcp.core import versions

from ..support.net import free_port
from ..support.peer import stateless_meta

pytestmark = pytest.mark.slow

HEXMCP = [sys.executable, "-m", "hexmcp.app.cli"]
UNKNOWN_TOOL = "no_such_tool"
CALL = {"name": UNKNOWN_TOOL, "arguments": {}}
INITIALIZE = {"protocolVersion": versions.LATEST_HANDSHAKE_VERSION, "capabilities": {},
              "clientInfo": {"name": "log-correlation-test", "version": "1"}}
ACCEPT = {"accept": "application/json, text/event-stream"}


def _records(stderr: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


def _assert_followable(records: list[dict[str, Any]], event_id: str, session_id: str | None = None) -> None:
    """The line logged under `event_id` names a session and a trace, and that trace names no other session."""
    lines = [r for r in records if r.get("eventId") == event_id]
    assert lines, f"no log line carries eventId {event_id}"
    line = lines[0]
    assert line.get("sessionId") and line.get("traceId"), line
    if session_id is not None:
        assert line["sessionId"] == session_id
    trace = [r for r in records if r.get("traceId") == line["traceId"]]
    assert {r.get("sessionId") for r in trace} == {line["sessionId"]}


def _wait_healthy(base: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            if httpx.get(base + "/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("hexmcp serve did not become healthy")


def test_every_http_and_websocket_request_can_be_followed_by_its_ids() -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = subprocess.Popen([*HEXMCP, "serve", "--no-classifier", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    expected: dict[str, tuple[str, str | None]] = {}  # transport -> (eventId the client got, sessionId if known)
    try:
        _wait_healthy(base, process)
        with httpx.Client(base_url=base, headers=ACCEPT, timeout=10) as http:
            # Streamable HTTP, handshake era, in a session.
            opened = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE})
            session_id = opened.headers["mcp-session-id"]
            headers = {"mcp-session-id": session_id}
            http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            failed = http.post("/mcp", headers=headers,
                               json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": CALL}).json()
            expected["http session"] = (failed["error"]["data"]["eventId"], session_id)
            # Streamable HTTP, handshake era, no session (a router's one-shot call).
            failed = http.post("/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": CALL}).json()
            expected["http sessionless"] = (failed["error"]["data"]["eventId"], None)
            # Streamable HTTP, 2026-07-28.
            stateless = {"mcp-protocol-version": versions.LATEST_VERSION, "mcp-method": "tools/call",
                         "mcp-name": UNKNOWN_TOOL}
            failed = http.post("/mcp", headers=stateless,
                               json={"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                                     "params": {**CALL, "_meta": stateless_meta()}}).json()
            expected["http 2026-07-28"] = (failed["error"]["data"]["eventId"], None)
            # The REST dialect.
            refused = http.post("/mcp/tools/call", json=CALL)
            assert refused.status_code >= 400
            expected["rest"] = (refused.json()["eventId"], None)
        # WebSocket, ChatGPT dialect (no `jsonrpc` member).
        with connect(f"ws://127.0.0.1:{port}/ws") as socket:
            socket.send(json.dumps({"id": 1, "method": "initialize", "params": INITIALIZE}))
            json.loads(socket.recv(timeout=10))
            socket.send(json.dumps({"method": "notifications/initialized"}))
            socket.send(json.dumps({"id": 2, "method": "tools/call", "params": CALL}))
            failed = json.loads(socket.recv(timeout=10))
            ws_session = socket.response.headers["mcp-session-id"]
            expected["websocket"] = (failed["error"]["data"]["eventId"], ws_session)
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    records = _records(stderr)
    for transport, (event_id, session_id) in expected.items():
        try:
            _assert_followable(records, event_id, session_id)
        except AssertionError as failure:
            raise AssertionError(f"{transport}: {failure}") from None


def test_a_stdio_request_can_be_followed_by_its_ids() -> None:
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": CALL}]
    done = subprocess.run([*HEXMCP, "stdio", "--no-classifier"], input="".join(json.dumps(m) + "\n" for m in messages),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    answers = {reply["id"]: reply for reply in map(json.loads, done.stdout.splitlines())}
    _assert_followable(_records(done.stderr), answers[2]["error"]["data"]["eventId"])
