"""The REST dialect (as the semantic-router's Go client speaks it), /health, and the security limits."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from hexmcp.wire import jsonrpc
from hexmcp.core import ErrorCode, versions
from tests.adapters.http_live import live_server
from tests.support.net import free_port
from tests.adapters.http_wire import Wire
from tests.fixtures.demo_server import build_demo_server

pytestmark = pytest.mark.timeout(30)

# Bodies exactly as mcp-go marshals its request structs: an empty method, params possibly empty.
GO_INITIALIZE = {"method": "", "params": {"protocolVersion": "2024-11-05", "capabilities": {"roots": {}},
                                          "clientInfo": {"name": "http-mcp-client", "version": "1.0.0"}}}
GO_PAGINATED = {"method": "", "params": {}}
GO_HEADERS = {"content-type": "application/json", "accept": "application/json"}


@pytest.fixture(scope="module")
def live():
    with live_server(build_demo_server()) as server:
        yield server


@pytest.fixture
def http(live):
    with httpx.Client(base_url=live.base, timeout=10) as client:
        yield client


def test_router_client_session(http) -> None:
    init = http.post("/mcp/initialize", json=GO_INITIALIZE, headers=GO_HEADERS)
    assert init.status_code == 200 and init.json()["protocolVersion"] == "2024-11-05"
    tools = http.post("/mcp/tools/list", json=GO_PAGINATED, headers=GO_HEADERS).json()
    assert "echo" in [tool["name"] for tool in tools["tools"]]
    assert "resources" in http.post("/mcp/resources/list", json=GO_PAGINATED, headers=GO_HEADERS).json()
    assert "prompts" in http.post("/mcp/prompts/list", json=GO_PAGINATED, headers=GO_HEADERS).json()
    call = {"method": "", "params": {"name": "echo", "arguments": {"text": "routed"}}}
    result = http.post("/mcp/tools/call", json=call, headers=GO_HEADERS).json()
    assert result == {"content": [{"type": "text", "text": "routed"}]}
    ping = http.post("/mcp/ping", headers={"content-type": "application/json", "accept": "application/json"})
    assert ping.status_code == 200 and ping.json() == {}


def test_flat_tools_call_body_and_structured_output(http) -> None:
    result = http.post("/mcp/tools/call", json={"name": "add", "arguments": {"a": 1, "b": 2}}).json()
    assert result["structuredContent"] == {"sum": 3}  # served on the latest handshake version


def test_version_header_pins_the_shape(http) -> None:
    result = http.post("/mcp/tools/call", json={"name": "add", "arguments": {"a": 1, "b": 2}},
                       headers={"mcp-protocol-version": versions.V2024_11_05}).json()
    assert "structuredContent" not in result


@pytest.mark.parametrize(("path", "body", "status", "code"), [
    ("/mcp/tools/call", {"name": "nope", "arguments": {}}, 400, ErrorCode.INVALID_PARAMS),
    ("/mcp/tools/call", {"name": "add", "arguments": {"a": "x"}}, 400, ErrorCode.INVALID_PARAMS),
    ("/mcp/no/such/method", {}, 404, ErrorCode.METHOD_NOT_FOUND),
    ("/mcp/resources/read", {"uri": "demo://missing"}, None, None),
])
def test_rest_errors_say_what_went_wrong(http, path, body, status, code) -> None:
    response = http.post(path, json=body)
    assert response.status_code >= 400
    error = response.json()
    assert {"code", "message", "eventId", "error"} <= set(error)
    if status is not None:
        assert response.status_code == status and error["error"] == code.value
        assert error["code"] == jsonrpc.ERROR_CODES[code]


def test_rest_malformed_and_wrong_method(http) -> None:
    assert http.post("/mcp/tools/list", content=b"{oops", headers={"content-type": "application/json"}).status_code == 400
    assert http.get("/mcp/tools/list").status_code == 405


def test_rest_deep_nesting_is_a_parse_error_like_on_mcp(http) -> None:
    response = http.post("/mcp/tools/call", content=b"[" * 100_000 + b"]" * 100_000,
                         headers={"content-type": "application/json"})
    error = response.json()
    assert response.status_code == 400 and error["error"] == ErrorCode.PARSE_ERROR.value
    assert "depth" in error["message"] and error["eventId"]


@pytest.mark.parametrize("meta", [1, "abc", [["a", "b"]], True, []])
def test_rest_meta_must_be_an_object_on_2026(http, meta) -> None:
    response = http.post("/mcp/tools/call", json={"name": "echo", "arguments": {"text": "x"}, "_meta": meta},
                         headers={"mcp-protocol-version": versions.V2026_07_28})
    error = response.json()
    assert response.status_code == 400 and error["error"] == ErrorCode.INVALID_PARAMS.value
    assert error["data"]["path"] == "$.params._meta" and "_meta" in error["message"] and error["eventId"]


def test_rest_params_must_be_an_object_on_2026(http) -> None:
    response = http.post("/mcp/tools/call", json=[1, 2], headers={"mcp-protocol-version": versions.V2026_07_28})
    assert response.status_code == 400 and response.json()["data"]["path"] == "$.params"


def test_rest_meta_object_is_kept_and_completed_on_2026(http) -> None:
    call = {"name": "echo", "arguments": {"text": "x"}, "_meta": {"progressToken": "p"}}
    response = http.post("/mcp/tools/call", json=call, headers={"mcp-protocol-version": versions.V2026_07_28})
    assert response.status_code == 200 and response.json()["content"] == [{"type": "text", "text": "x"}]


def test_unknown_paths_are_404(http) -> None:
    assert http.get("/nothing").status_code == 404


def test_health_waits_for_readiness() -> None:
    state = {"ready": False}
    with live_server(build_demo_server(), ready=lambda: state["ready"], auth_token="t0ken",
                     health=lambda: {"categories": ["math"], "model": "m", "index_size": 3}) as live:
        with httpx.Client(base_url=live.base) as http:
            starting = http.get("/health")
            assert starting.status_code == 503 and starting.json()["status"] == "starting"
            state["ready"] = True
            assert http.get("/health").json() == {"status": "ok"}  # open, but the details are the operator's
            body = http.get("/health", headers={"authorization": "Bearer t0ken"}).json()
            assert body["status"] == "ok" and body["categories"] == ["math"] and body["index_size"] == 3
            assert "uptime_s" in body and body["version"] == "1.0.0"


def test_startup_hooks_run_in_the_background() -> None:
    started = asyncio.Event()

    async def hook() -> None:
        started.set()

    with live_server(build_demo_server(), on_startup=[hook]):
        deadline = time.monotonic() + 5
        while not started.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert started.is_set()


def test_bearer_token() -> None:
    with live_server(build_demo_server(), auth_token="s3cret") as live:
        with httpx.Client(base_url=live.base) as http:
            denied = http.post("/mcp/ping")
            assert denied.status_code == 401 and denied.headers["www-authenticate"].startswith("Bearer")
            assert http.post("/mcp/ping", headers={"authorization": "Bearer wrong"}).status_code == 401
            assert http.post("/mcp/ping", headers={"authorization": "Bearer s3cret"}).status_code == 200
            assert http.post("/mcp/ping", headers={"authorization": "bearer s3cret"}).status_code == 200


@pytest.mark.parametrize(("headers", "status"), [
    ({"host": "evil.example.com"}, 403),
    ({"origin": "http://evil.example.com"}, 403),
    ({"origin": "null"}, 403),
    ({"host": "localhost:1234", "origin": "http://localhost:5173"}, 403),  # a page on another local port
    ({"host": "localhost:1234", "origin": "http://localhost:1234"}, 200),  # the port the page addressed
    ({"host": "[::1]:80"}, 200),
    ({"host": "api.internal:8090"}, 200),
    ({"origin": "https://app.example"}, 200),
])
def test_dns_rebinding_guard(headers, status) -> None:
    with live_server(build_demo_server(), allowed_hosts=["api.internal"],
                     allowed_origins=["https://app.example"]) as live:
        with httpx.Client(base_url=live.base) as http:
            assert http.post("/mcp/ping", headers=headers).status_code == status


def test_cors_only_when_configured(live, http) -> None:
    preflight = {"origin": "http://localhost:3000", "access-control-request-method": "POST"}
    assert "access-control-allow-origin" not in http.options("/mcp", headers=preflight).headers
    with live_server(build_demo_server(), cors_origins=["https://ui.example"]) as cors:
        with httpx.Client(base_url=cors.base) as client:
            answer = client.options("/mcp", headers={**preflight, "origin": "https://ui.example"})
            assert answer.headers["access-control-allow-origin"] == "https://ui.example"
            wire = Wire(cors.base)
            wire.http.headers["origin"] = "https://ui.example"
            wire.initialize()
            response, _ = wire.request("ping")
            assert "mcp-session-id" in response.headers["access-control-expose-headers"].lower()
            wire.close()


def test_concurrency_cap_answers_503_with_retry_after() -> None:
    async def scenario(base: str) -> list[httpx.Response]:
        call = {"name": "slow", "arguments": {"seconds": 0.5, "steps": 1}}
        async with httpx.AsyncClient(base_url=base, timeout=10) as client:
            slow = [asyncio.ensure_future(client.post("/mcp/tools/call", json=call)) for _ in range(2)]
            await asyncio.sleep(0.2)
            busy = await client.post("/mcp/ping")
            return [busy, *await asyncio.gather(*slow)]

    with live_server(build_demo_server(), max_concurrent_requests=2) as live:
        busy, *done = asyncio.run(scenario(live.base))
    assert busy.status_code == 503 and busy.headers["retry-after"]
    assert busy.json()["error"]["code"] == jsonrpc.ERROR_CODES[ErrorCode.SERVER_BUSY]
    assert [r.status_code for r in done] == [200, 200]


def test_request_timeout() -> None:
    with live_server(build_demo_server(), request_timeout_s=0.2) as live:
        wire = Wire(live.base)
        wire.initialize()
        response, [answer] = wire.request("tools/call", {"name": "slow", "arguments": {"seconds": 2, "steps": 1}})
        assert answer["error"]["code"] == jsonrpc.ERROR_CODES[ErrorCode.REQUEST_TIMEOUT]
        wire.close()


def test_session_cap_evicts_the_least_recently_used_idle_session() -> None:
    with live_server(build_demo_server(), max_sessions=2) as live:
        wires = [Wire(live.base) for _ in range(3)]
        for wire in wires:
            wire.initialize()
        assert wires[0].request("ping")[0].status_code == 404
        assert [w.request("ping")[0].status_code for w in wires[1:]] == [200, 200]
        for wire in wires:
            wire.close()


def test_idle_sessions_expire() -> None:
    with live_server(build_demo_server(), session_idle_timeout_s=0.2) as live:
        wire = Wire(live.base)
        wire.initialize()
        time.sleep(0.3)
        asyncio.run_coroutine_threadsafe(live.app.mcp.sessions.sweep(), _loop_of(live)).result(5)
        assert wire.request("ping")[0].status_code == 404
        wire.close()


def _loop_of(live) -> asyncio.AbstractEventLoop:
    for task in live.app._background:
        return task.get_loop()
    raise AssertionError("no background task to find the loop by")


@pytest.mark.timeout(40)
def test_sigterm_shuts_down_cleanly_with_streams_open() -> None:
    port = free_port()
    env = {**os.environ, "HEXMCP_LOG_LEVEL": "warning"}
    process = subprocess.Popen([sys.executable, "-m", "hexmcp.app.cli", "serve", "--no-classifier",
                                "--port", str(port)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 15
        while True:
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "hexmcp serve did not come up"
            time.sleep(0.1)
        wire = Wire(base)
        wire.initialize()
        with httpx.Client(base_url=base, timeout=10) as client:
            with client.stream("GET", "/mcp", headers={**wire.headers(), "accept": "text/event-stream"}) as stream:
                lines = stream.iter_lines()
                next(lines)
                process.send_signal(signal.SIGTERM)
                for _ in lines:  # the server ends the stream as it shuts down
                    pass
        assert process.wait(timeout=15) == 0
        wire.close()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_rest_call_whose_client_leaves_is_cancelled():
    # A REST answer has no other way back: once the client is gone, its work only delays others
    # (a queued classification is dropped by the inference pool when its caller is cancelled).
    server = build_demo_server()
    started, cancelled = asyncio.Event(), []

    @server.tool()
    async def wait_forever() -> str:
        """Blocks until cancelled."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "never"

    with live_server(server) as live:
        host, port = live.base.removeprefix("http://").split(":")
        body = b'{"name": "wait_forever", "arguments": {}}'
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(b"POST /mcp/tools/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            deadline = time.monotonic() + 10
            while not started.is_set() and time.monotonic() < deadline:
                time.sleep(0.01)
        deadline = time.monotonic() + 10
        while not cancelled and time.monotonic() < deadline:
            time.sleep(0.01)
        assert started.is_set() and cancelled == [True]  # before shutdown, which would cancel it anyway
