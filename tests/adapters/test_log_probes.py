"""An operator following requests through the logs of a real `hexmcp serve`: the probes of the
observability audit (bench/diaries/observability.md, "Following requests through the logs").

- every refusal an adapter makes before the core (HTTP 400/404/406/413/415, an unknown path, a WebSocket
  upgrade turned away, a batch's invalid item) is logged under the eventId the client got, in exactly one
  line, and that line carries a traceId of its own (they carried none; a batch's invalid item carried the
  trace of the notification before it);
- an upgrade refused over HTTP leaves no uvicorn ERROR line that names no request;
- many concurrent clients (HTTP sessions, sessionless, 2026-07-28, REST, WebSocket): each answer's eventId
  names one line, about that client's own request, in that client's session; no trace spans two sessions;
- whatever a client puts in a method name or an id (newlines, quotes, JSON) stays inside its JSON field:
  every stderr line is one JSON object and no field is forged (hypothesis).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.sync.client import connect

from hexmcp.core import versions

from ..support.net import free_port
from ..support.peer import stateless_meta

pytestmark = pytest.mark.slow

HEXMCP = [sys.executable, "-m", "hexmcp.app.cli"]
ACCEPT = {"accept": "application/json, text/event-stream"}
INITIALIZE = {"protocolVersion": versions.LATEST_HANDSHAKE_VERSION, "capabilities": {},
              "clientInfo": {"name": "log-probes", "version": "1"}}


class LiveServer:
    """`hexmcp serve` with its stderr read as it is written, so a test can wait for a line."""

    def __init__(self, *args: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen([*HEXMCP, "serve", "--no-classifier", "--port", str(self.port), *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "\n".join(self.lines)
            try:
                if httpx.get(self.base + "/health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError("hexmcp serve did not become healthy")

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in list(self.lines)]

    def lines_of(self, event_id: str, timeout: float = 10) -> list[dict[str, Any]]:
        """The log lines naming `event_id` (waiting for the first, then for stragglers a moment)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [r for r in self.records() if r.get("eventId") == event_id]
            if found:
                time.sleep(0.05)
                return [r for r in self.records() if r.get("eventId") == event_id]
            time.sleep(0.02)
        return []

    def stop(self) -> str:
        """Terminate; stdout's text. stderr stays the reader thread's alone (`communicate` would read it
        too, and a line split between two readers looks like two lines run together)."""
        self.process.terminate()
        assert self.process.stdout is not None
        out = self.process.stdout.read()
        self.process.wait(timeout=30)
        self._reader.join(timeout=10)
        return out


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    live = LiveServer()
    try:
        yield live
    finally:
        stdout = live.stop()
        assert stdout == ""  # `serve` writes nothing but to stderr
        for line in live.lines:  # every line, start to shutdown, is one JSON object
            assert isinstance(json.loads(line), dict), line


def _one_line_with_a_trace(server: LiveServer, event_id: str) -> dict[str, Any]:
    lines = server.lines_of(event_id)
    assert len(lines) == 1, (event_id, lines)
    assert lines[0].get("traceId"), lines[0]
    return lines[0]


def _event_id(answer: httpx.Response) -> str:
    body = answer.json()
    return body["eventId"] if "eventId" in body else body["error"]["data"]["eventId"]


def test_every_refusal_before_the_core_is_logged_once_under_its_event_id_with_a_trace(server: LiveServer) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with httpx.Client(base_url=server.base, timeout=10) as http:
        refused = {
            400: http.post("/mcp", headers={**ACCEPT, "content-type": "application/json"}, content=b"{not json"),
            406: http.post("/mcp", headers={"accept": "text/html"}, json=ping),
            415: http.post("/mcp", headers={**ACCEPT, "content-type": "text/plain"}, content=json.dumps(ping)),
            404: http.post("/mcp", headers={**ACCEPT, "mcp-session-id": "no-such-session"}, json=ping),
            413: http.post("/mcp", headers={**ACCEPT, "content-type": "application/json"},
                           content=b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * (5 << 20) + b'"}}'),
        }
        unknown_path = http.post("/no/such/path", json=ping)
    traces = set()
    for status, answer in refused.items():
        assert answer.status_code == status, (status, answer.text)
        traces.add(_one_line_with_a_trace(server, _event_id(answer))["traceId"])
    assert unknown_path.status_code == 404
    traces.add(_one_line_with_a_trace(server, _event_id(unknown_path))["traceId"])
    assert len(traces) == len(refused) + 1  # a trace of its own each


def test_a_batchs_invalid_item_is_not_logged_under_the_notification_before_it(server: LiveServer) -> None:
    with httpx.Client(base_url=server.base, headers=ACCEPT, timeout=10) as http:
        opened = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                         "params": {**INITIALIZE, "protocolVersion": versions.V2025_03_26}})
        session = {"mcp-session-id": opened.headers["mcp-session-id"]}
        http.post("/mcp", headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        answers = http.post("/mcp", headers=session, json=[
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
            {"jsonrpc": "2.0", "id": 7},  # not a request, not an answer
            {"jsonrpc": "2.0", "id": 9, "params": {}},
            {"jsonrpc": "2.0", "id": 8, "method": "ping"}]).json()
    invalid = [a for a in answers if "error" in a]
    assert len(invalid) == 2
    lines = [_one_line_with_a_trace(server, a["error"]["data"]["eventId"]) for a in invalid]
    # A trace each: they carried the one bound for the notification before them, the same for both.
    assert lines[0]["traceId"] != lines[1]["traceId"]
    assert lines[0]["sessionId"] == lines[1]["sessionId"] == session["mcp-session-id"]


def test_a_websocket_upgrade_refused_over_http_leaves_one_line_and_no_uvicorn_error(server: LiveServer) -> None:
    before = len(server.lines)
    with pytest.raises(Exception) as refused:
        with connect(f"ws://127.0.0.1:{server.port}/no/such/socket"):
            pass
    response = refused.value.response  # type: ignore[attr-defined]
    assert response.status_code == 404
    event_id = json.loads(response.body)["error"]["data"]["eventId"]
    _one_line_with_a_trace(server, event_id)
    time.sleep(0.2)
    later = [json.loads(line) for line in server.lines[before:]]
    assert not [r for r in later if r.get("level") == "error"], later


def test_the_audit_trail_names_the_ids_of_the_log_line(tmp_path: Path) -> None:
    trail = tmp_path / "audit.jsonl"
    live = LiveServer("--audit-log", str(trail))
    try:
        with httpx.Client(base_url=live.base, timeout=10) as http:
            refused = http.post("/mcp", headers={"accept": "text/html"}, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            rejected = http.post("/mcp", headers=ACCEPT, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                               "params": {"name": "missing", "arguments": {}}})
            # No gateway configured: a tool error (isError), its eventId in `_meta` (it had none).
            failed = http.post("/mcp", headers=ACCEPT, json={"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                                             "params": {"name": "routeCompletion",
                                                                        "arguments": {"prompt": "hello"}}}).json()
        assert failed["result"]["isError"] is True
        tool_error = failed["result"]["_meta"]["io.hexmcp/eventId"]
        assert json.loads(failed["result"]["content"][0]["text"])["error"]["data"]["eventId"] == tool_error
        logged = {kind: _one_line_with_a_trace(live, _event_id(answer))
                  for kind, answer in (("refusal", refused), ("request", rejected))}
        logged["tool error"] = _one_line_with_a_trace(live, tool_error)
    finally:
        live.stop()
    audited = {line["eventId"]: line for line in map(json.loads, trail.read_text().splitlines())}
    for kind, line in logged.items():
        record = audited[line["eventId"]]  # the tool error's audit line had an eventId of its own
        assert record["kind"] == ("request" if kind == "tool error" else kind)
        assert record.get("traceId") == line["traceId"], (record, line)  # the refusal's was missing
        assert record.get("sessionId") == line.get("sessionId"), (record, line)


def _http_session_client(server: LiveServer, n: int) -> list[tuple[str, str | None, str]]:
    """A session's client making failing calls: (eventId, its sessionId, the tool name it sent)."""
    seen = []
    with httpx.Client(base_url=server.base, headers=ACCEPT, timeout=30) as http:
        opened = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE})
        session_id = opened.headers["mcp-session-id"]
        headers = {"mcp-session-id": session_id}
        http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        for k in range(5):
            tool = f"missing_{n}_{k}"
            answer = http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 2 + k, "method": "tools/call",
                                                              "params": {"name": tool, "arguments": {}}})
            seen.append((_event_id(answer), session_id, tool))
    return seen


def _sessionless_client(server: LiveServer, n: int) -> list[tuple[str, str | None, str]]:
    seen = []
    with httpx.Client(base_url=server.base, headers=ACCEPT, timeout=30) as http:
        for k in range(5):
            tool = f"missing_{n}_{k}"
            call = {"name": tool, "arguments": {}}
            if k % 3 == 0:
                answer = http.post("/mcp", json={"jsonrpc": "2.0", "id": k, "method": "tools/call", "params": call})
            elif k % 3 == 1:
                answer = http.post("/mcp", headers={"mcp-protocol-version": versions.LATEST_VERSION,
                                                    "mcp-method": "tools/call", "mcp-name": tool},
                                   json={"jsonrpc": "2.0", "id": k, "method": "tools/call",
                                         "params": {**call, "_meta": stateless_meta()}})
            else:
                answer = http.post("/mcp/tools/call", json=call)
            seen.append((_event_id(answer), None, tool))
    return seen


def _websocket_client(server: LiveServer, n: int) -> list[tuple[str, str | None, str]]:
    seen = []
    with connect(f"ws://127.0.0.1:{server.port}/ws") as socket:
        socket.send(json.dumps({"id": 1, "method": "initialize", "params": INITIALIZE}))
        json.loads(socket.recv(timeout=30))
        socket.send(json.dumps({"method": "notifications/initialized"}))
        session_id = socket.response.headers["mcp-session-id"]
        tools = {}
        for k in range(5):  # sent at once: served side by side on one connection
            tools[2 + k] = f"missing_{n}_{k}"
            socket.send(json.dumps({"id": 2 + k, "method": "tools/call",
                                    "params": {"name": tools[2 + k], "arguments": {}}}))
        for _ in tools:
            answer = json.loads(socket.recv(timeout=30))
            seen.append((answer["error"]["data"]["eventId"], session_id, tools[answer["id"]]))
    return seen


def test_concurrent_clients_never_see_each_others_ids(server: LiveServer) -> None:
    clients = [_http_session_client, _sessionless_client, _websocket_client]
    with ThreadPoolExecutor(max_workers=24) as pool:
        futures = [pool.submit(clients[n % 3], server, n) for n in range(48)]
        seen = [item for future in futures for item in future.result()]
    assert len({event_id for event_id, _, _ in seen}) == len(seen) == 48 * 5
    for event_id, session_id, tool in seen:
        lines = server.lines_of(event_id)
        assert len(lines) == 1, (event_id, lines)
        line = lines[0]
        assert line.get("traceId") and line.get("sessionId"), line
        assert tool in line["reason"], line  # the line is about this client's request...
        if session_id is not None:
            assert line["sessionId"] == session_id, line  # ...in this client's session
    sessions_of_trace: dict[str, set[str]] = {}
    for record in server.records():
        if record.get("traceId") and record.get("sessionId"):
            sessions_of_trace.setdefault(record["traceId"], set()).add(record["sessionId"])
    assert all(len(sessions) == 1 for sessions in sessions_of_trace.values())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.text(min_size=1, max_size=40), request_id=st.one_of(st.text(max_size=40), st.integers(-2**53, 2**53)))
def test_what_a_client_names_cannot_inject_log_lines_or_fields(server: LiveServer, method: str,
                                                              request_id: str | int) -> None:
    before = len(server.lines)
    with httpx.Client(base_url=server.base, headers=ACCEPT, timeout=10) as http:
        answer = http.post("/mcp", headers={"content-type": "application/json"},
                           content=json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method}))
    body = answer.json()
    if "error" not in body:  # a method that exists (ping...): nothing logged about it
        return
    event_id = body["error"]["data"]["eventId"]
    line = _one_line_with_a_trace(server, event_id)
    assert set(line) <= {"method", "code", "reason", "eventId", "event", "sessionId", "traceId", "level",
                         "timestamp", "path", "tool", "data"}, line
    if "method" in line:
        assert line["method"] == method
    for raw in server.lines[before:]:
        assert isinstance(json.loads(raw), dict), raw
        assert "forged" not in json.loads(raw).get("eventId", "")


def test_stdio_start_up_lines_name_the_session_and_no_requests_trace() -> None:
    """The start-up hooks start once the first input is handled; they ran in the reader's context then, and
    their lines carried the trace of the last request read (here: the unknown tool's)."""
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "missing", "arguments": {}}}]
    done = subprocess.run([*HEXMCP, "stdio", "--no-classifier"], input="".join(json.dumps(m) + "\n" for m in messages),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stderr.splitlines()]
    session_id = next(r["sessionId"] for r in records if r["event"] == "serving stdio")
    hook_lines = [r for r in records if r["event"].startswith("no gateway configured")]
    assert hook_lines, records
    for line in hook_lines:
        assert line.get("sessionId") == session_id and "traceId" not in line, line
    assert {r.get("sessionId") for r in records} == {session_id}


def test_an_upstreams_tool_error_is_logged_here_under_the_event_id_the_client_gets() -> None:
    """A mounted upstream's tool error named the upstream's eventId, which only the upstream's own stderr (read
    into a ring, never relayed) carried: no line of this server's log named it."""
    upstream = f"demo=stdio:{sys.executable} -m tests.fixtures.demo_server"
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE},
                {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    process = subprocess.Popen([*HEXMCP, "stdio", "--no-classifier", "--no-knowledge", "--upstream", upstream],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None

    def request(message: dict[str, Any]) -> dict[str, Any]:
        process.stdin.write(json.dumps(message) + "\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]
        while True:
            reply = json.loads(process.stdout.readline())  # type: ignore[union-attr]
            if reply.get("id") == message["id"]:
                return reply

    try:
        request(messages[0])
        process.stdin.write(json.dumps(messages[1]) + "\n")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # mounted in the background once the handshake is answered
            tools = request({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})["result"]["tools"]
            if any(t["name"] == "demo__fail" for t in tools):
                break
            time.sleep(0.2)
        failed = request({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "demo__fail", "arguments": {}}})
        refused = request({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                           "params": {"name": "demo__refuse", "arguments": {"reason": "no\n{\"eventId\": \"x\"}"}}})
    finally:
        _, stderr = process.communicate(timeout=60)  # closes stdin: EOF ends the session
    records = [json.loads(line) for line in stderr.splitlines()]
    session_id = next(r["sessionId"] for r in records if r["event"] == "serving stdio")
    for answer in (failed, refused):
        assert answer["result"]["isError"] is True
        event_id = answer["result"]["_meta"]["io.hexmcp/eventId"]
        lines = [r for r in records if r.get("eventId") == event_id]
        assert len(lines) == 1, (event_id, records)
        assert lines[0]["sessionId"] == session_id and lines[0].get("traceId"), lines[0]
        assert lines[0]["upstream"] == "demo"
