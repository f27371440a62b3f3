"""/metrics on a real `hexmcp serve`: known traffic on Streamable HTTP (the official SDK client), the REST
dialect and WebSocket, then the scrape must hold exactly those operations, with the conventions' names,
labels and buckets; sessions open while connected and timed when closed; the gateway's calls and retries;
and the bearer token guarding /metrics but not /health."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from websockets.sync.client import connect

from hexmcp.wire.jsonrpc import ERROR_CODES
from hexmcp.adapters.telemetry.conventions import DURATION_BUCKETS_S, TOOL_ERROR
from hexmcp.adapters.telemetry.metrics import OTHER
from hexmcp.core import ErrorCode, versions

from ..support.fake_gateway import FakeGateway, Script, fake_gateway
from ..support.telemetry import scrape, serve

pytestmark = pytest.mark.slow

OPERATION = "mcp_server_operation_duration_seconds_count"
SESSION = "mcp_server_session_duration_seconds_count"
UNKNOWN_PARAMS = str(ERROR_CODES[ErrorCode.INVALID_PARAMS])
INITIALIZE = {"protocolVersion": versions.LATEST_HANDSHAKE_VERSION, "capabilities": {},
              "clientInfo": {"name": "metrics-test", "version": "1"}}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, FakeGateway]]:
    log = tmp_path_factory.mktemp("metrics") / "stderr.log"
    with fake_gateway() as upstream:
        # The models list fetched at start-up fails once (503) and is retried: one retry, one ok call.
        upstream.queue("models", Script(status=503))
        env = {**os.environ, "GATEWAY_URL": upstream.url, "DEFAULT_MODEL": "llama-3.1-8b-instruct"}
        with serve("--no-classifier", "--no-knowledge", env=env, log=log) as base:
            yield base, upstream


def _sdk_traffic(url: str, upstream: FakeGateway) -> None:
    async def run() -> None:
        async with streamable_http_client(url) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                await session.list_tools()
                ok = await session.call_tool("listModels", {})
                assert not ok.is_error
                upstream.queue("chat", Script(status=400, body={"error": {"message": "bad request"}}))
                failed = await session.call_tool("routeCompletion", {"prompt": "hello", "maxTokens": 8})
                assert failed.is_error
                with pytest.raises(MCPError):  # a protocol error, not a tool error
                    await session.call_tool("made_up_tool_42", {})

    asyncio.run(run())


def test_operations_on_every_http_transport_are_counted_with_the_conventions_labels(served: Any) -> None:
    base, upstream = served
    _sdk_traffic(base + "/mcp", upstream)
    rest = httpx.post(base + "/mcp/tools/call", json={"name": "listModels", "arguments": {}}, timeout=30)
    assert rest.status_code == 200 and not rest.json().get("isError")
    with connect(base.replace("http", "ws") + "/ws") as socket:
        socket.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}))
        json.loads(socket.recv(timeout=10))
        socket.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        socket.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                "params": {"name": "listModels", "arguments": {}}}))
        assert "result" in json.loads(socket.recv(timeout=10))
        during = scrape(base + "/metrics")
    after = scrape(base + "/metrics")

    http = {"network_transport": "tcp", "network_protocol_name": "http"}
    websocket = {"network_transport": "tcp", "network_protocol_name": "websocket"}
    call = {"mcp_method_name": "tools/call"}
    # Streamable HTTP (SDK): one successful listModels, one tool error, one unknown tool (a protocol error).
    # REST adds one successful listModels on the same labels (REST is HTTP too).
    assert after.value(OPERATION, **call, **http, gen_ai_tool_name="listModels", error_type="") == 2
    assert after.value(OPERATION, **call, **http, gen_ai_tool_name="routeCompletion", error_type=TOOL_ERROR) == 1
    assert after.value(OPERATION, **call, **http, gen_ai_tool_name=OTHER, error_type=UNKNOWN_PARAMS) == 1
    assert after.value(OPERATION, mcp_method_name="initialize", **http) == 1
    assert after.value(OPERATION, mcp_method_name="tools/list", **http) == 1
    assert after.value(OPERATION, **call, **websocket, gen_ai_tool_name="listModels", error_type="") == 1
    assert after.value(OPERATION, mcp_method_name="initialize", **websocket,
                       mcp_protocol_version=versions.LATEST_HANDSHAKE_VERSION) == 1
    # A made-up tool name never becomes a label of its own.
    assert all(labels["gen_ai_tool_name"] in ("", "listModels", "routeCompletion", OTHER)
               for labels in after.labelled(OPERATION))
    # The conventions' buckets, in seconds.
    bounds = {float(labels["le"]) for labels in after.labelled("mcp_server_operation_duration_seconds_bucket")}
    assert bounds == {*map(float, DURATION_BUCKETS_S), float("inf")}
    # Nothing left in flight; the WebSocket session was open while connected and timed once it closed.
    assert after.value("hexmcp_requests_in_flight") == 0
    assert during.value("hexmcp_sessions_open", hexmcp_transport="ws") == 1
    assert after.value("hexmcp_sessions_open", hexmcp_transport="ws") == 0
    assert after.value(SESSION, **websocket) == 1
    assert after.value(SESSION, **http) == 1  # the SDK's session, ended by its DELETE
    # The gateway: the start-up models list (503, retried, then ok; listModels may fetch it again), and
    # the one chat completion, which failed with 400 (not retried).
    assert after.value("hexmcp_gateway_retries_total") >= 1
    assert after.value("hexmcp_gateway_calls_total", operation="models list", outcome="ok") >= 1
    assert after.value("hexmcp_gateway_calls_total", operation="chat completion", outcome="ok") == 0
    assert after.value("hexmcp_gateway_calls_total", operation="chat completion") == 1
    # The process itself, for soaks: resident memory and open descriptors.
    assert after.value("process_resident_memory_bytes") > 0 and after.value("process_open_fds") > 0


def test_metrics_need_the_bearer_token_when_one_is_set_and_health_does_not(tmp_path: Path) -> None:
    env = {**os.environ, "HEXMCP_AUTH_TOKEN": "metrics-secret"}
    with serve("--no-classifier", "--no-knowledge", env=env, log=tmp_path / "stderr.log") as base:
        assert httpx.get(base + "/metrics").status_code == 401
        assert httpx.get(base + "/health").status_code == 200
        assert scrape(base + "/metrics", authorization="Bearer metrics-secret").value("process_open_fds") > 0
        assert httpx.post(base + "/metrics", headers={"authorization": "Bearer metrics-secret"}).status_code == 405


def test_no_metrics_serves_no_metrics(tmp_path: Path) -> None:
    with serve("--no-classifier", "--no-knowledge", "--no-metrics", log=tmp_path / "stderr.log") as base:
        assert httpx.get(base + "/metrics").status_code == 404
