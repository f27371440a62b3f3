"""2026-07-28 over HTTP: no sessions, routing headers checked against the body, statuses by error code."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest

from hexmcp.wire import jsonrpc
from hexmcp.adapters.http import STATUS
from hexmcp.core import ErrorCode, NullPeer, ToolContext
from hexmcp.core.meta import META_PROTOCOL_VERSION
from tests.adapters.http_live import live_server
from tests.adapters.http_wire import MODERN, Wire, modern_params, parse_sse
from tests.fixtures.demo_server import build_demo_server

pytestmark = pytest.mark.timeout(30)
HEADER_MISMATCH = jsonrpc.ERROR_CODES[ErrorCode.HEADER_MISMATCH]


def _server():
    server = build_demo_server()

    @server.tool()
    async def touch(ctx: ToolContext) -> str:
        """Tells listeners the tool list changed."""
        server.notify_list_changed("tools")
        return "touched"

    async def routed(arguments: dict, ctx: ToolContext) -> str:
        return f"{arguments.get('region')}/{arguments.get('count')}"

    server.tools.add("routed", routed, description="Has arguments mirrored into Mcp-Param-* headers.",
                     input_schema={"type": "object",
                                   "properties": {"region": {"type": "string", "x-mcp-header": "Region"},
                                                  "count": {"type": "integer", "x-mcp-header": "Count"}}})

    return server


@pytest.fixture(scope="module")
def live():
    with live_server(_server()) as server:
        yield server


def _error(response: httpx.Response) -> dict:
    return response.json()["error"]


def test_discover_needs_no_session(wire) -> None:
    response, [answer] = wire.modern("server/discover")
    assert response.status_code == 200 and "mcp-session-id" not in response.headers
    assert MODERN in answer["result"]["supportedVersions"] and answer["result"]["resultType"] == "complete"


def test_tool_call_and_input_required_round_trip(wire) -> None:
    response, [answer] = wire.modern("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, name="echo")
    assert answer["result"]["content"][0]["text"] == "hi"
    caps = {"elicitation": {}}
    response, [first] = wire.modern("tools/call", {"name": "ask_name", "arguments": {}}, name="ask_name",
                                    capabilities=caps)
    assert first["result"]["resultType"] == "input_required"  # never a JSON-RPC request on the stream
    key = next(iter(first["result"]["inputRequests"]))
    retry = {"name": "ask_name", "arguments": {}, "inputResponses": {key: {"action": "accept",
                                                                        "content": {"name": "Bo"}}}}
    if "requestState" in first["result"]:
        retry["requestState"] = first["result"]["requestState"]
    response, [second] = wire.modern("tools/call", retry, name="ask_name", capabilities=caps)
    assert second["result"]["content"][0]["text"] == "Hello, Bo!"


def test_progress_streams_on_the_response(wire) -> None:
    params = {"name": "slow", "arguments": {"seconds": 0.05}}
    message = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": modern_params(params)}
    message["params"]["_meta"]["progressToken"] = "p"
    wire.transcript.sent(message)
    response = wire.http.post("/mcp", json=message, headers=wire.headers(
        {"mcp-method": "tools/call", "mcp-name": "slow"}, version=MODERN))
    assert response.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(response.text)
    assert all("id" not in event for event in events)  # 2026 streams are not resumable
    messages = wire.messages(response)
    assert all("id" not in m for m in messages[:-1]) and messages[-1]["id"] == 3


@pytest.mark.parametrize(("headers", "method", "name"), [
    ({"mcp-method": "prompts/list"}, "tools/list", None),
    ({}, "tools/list", None),
    ({"mcp-method": "TOOLS/LIST"}, "tools/list", None),
    ({"mcp-method": "tools/call", "mcp-name": "wrong"}, "tools/call", "echo"),
    ({"mcp-method": "tools/call"}, "tools/call", "echo"),
    ({"mcp-method": "tools/call", "mcp-name": "=?base64?ZWNobw?=", }, "tools/call", "echo"),  # bad padding
])
def test_header_mismatch_is_400(wire, headers, method, name) -> None:
    params = modern_params({"name": name, "arguments": {"text": "x"}} if name else {})
    message = {"jsonrpc": "2.0", "id": 41, "method": method, "params": params}
    wire.transcript.sent(message)
    response = wire.http.post("/mcp", json=message, headers={**wire.headers(version=MODERN), **headers})
    assert response.status_code == 400
    assert _error(response)["code"] == HEADER_MISMATCH and response.json()["id"] == 41
    wire.messages(response)


@pytest.mark.parametrize("headers", [
    {"MCP-METHOD": "tools/call", "Mcp-Name": "echo"},
    {"mcp-method": "tools/call", "mcp-name": "=?base64?ZWNobw==?="},
])
def test_header_forms_accepted(wire, headers) -> None:
    message = {"jsonrpc": "2.0", "id": 42, "method": "tools/call",
               "params": modern_params({"name": "echo", "arguments": {"text": "x"}})}
    response = wire.http.post("/mcp", json=message, headers={**wire.headers(version=MODERN), **headers})
    assert response.status_code == 200 and "error" not in response.json()


def test_whitespace_around_header_values_is_accepted(live) -> None:
    # httpx refuses to send such a header, so this one goes over a raw socket.
    body = json.dumps({"jsonrpc": "2.0", "id": 43, "method": "tools/call",
                       "params": modern_params({"name": "echo", "arguments": {"text": "x"}})}).encode()
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{live.config.port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n"
            f"Mcp-Method:  tools/call \r\nMcp-Name: \t echo  \r\nContent-Length: {len(body)}\r\n"
            f"Connection: close\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", live.config.port), timeout=5) as sock:
        sock.sendall(head + body)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    assert raw.startswith(b"HTTP/1.1 200") and b'"error"' not in raw


def test_missing_meta_is_invalid_params_before_header_checks(wire) -> None:
    for params in ({}, {"_meta": {META_PROTOCOL_VERSION: MODERN}}):
        message = {"jsonrpc": "2.0", "id": 102, "method": "server/discover", "params": params}
        response = wire.http.post("/mcp", json=message, headers=wire.headers({"mcp-method": "other"}, version=MODERN))
        assert response.status_code == 400 and _error(response)["code"] == jsonrpc.INVALID_PARAMS


def test_version_header_must_match_meta(wire) -> None:
    message = {"jsonrpc": "2.0", "id": 302, "method": "server/discover", "params": modern_params(version="v999.0.0")}
    response = wire.http.post("/mcp", json=message, headers=wire.headers({"mcp-method": "server/discover"},
                                                                         version=MODERN))
    assert response.status_code == 400 and _error(response)["code"] == HEADER_MISMATCH


def test_unsupported_version_is_32022_with_data(wire) -> None:
    message = {"jsonrpc": "2.0", "id": 301, "method": "server/discover", "params": modern_params(version="v999.0.0")}
    response = wire.http.post("/mcp", json=message, headers=wire.headers({"mcp-method": "server/discover"},
                                                                         version="v999.0.0"))
    error = _error(response)
    assert response.status_code == 400 and error["code"] == jsonrpc.ERROR_CODES[ErrorCode.UNSUPPORTED_PROTOCOL_VERSION]
    assert error["data"]["requested"] == "v999.0.0" and MODERN in error["data"]["supported"]


@pytest.mark.parametrize("params", [{}, None, modern_params(), modern_params(version="banana")])
@pytest.mark.parametrize("routing", [{}, {"mcp-method": "server/discover"}, {"mcp-method": "tools/list"}])
def test_an_unsupported_version_header_is_reported_before_other_checks(wire, params, routing) -> None:
    message = {"jsonrpc": "2.0", "id": 303, "method": "server/discover"}
    if params is not None:
        message["params"] = params
    response = wire.http.post("/mcp", json=message, headers=wire.headers(routing, version="banana"))
    error = _error(response)
    assert response.status_code == 400 and response.json()["id"] == 303
    assert error["code"] == jsonrpc.ERROR_CODES[ErrorCode.UNSUPPORTED_PROTOCOL_VERSION]
    assert error["data"]["requested"] == "banana" and error["data"]["eventId"]


def test_the_version_header_answer_matches_the_cores(wire) -> None:
    """The adapter's -32022 (for the header) says what the core's (for `_meta`) says."""
    core = asyncio.run(_core_error(modern_params(version="v999.0.0")))
    message = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": modern_params(version="v999.0.0")}
    adapter = _error(wire.http.post("/mcp", json=message, headers=wire.headers(version="v999.0.0")))
    assert adapter["code"] == core["code"] and adapter["message"] == core["message"]
    assert {**adapter["data"], "eventId": None} == {**core["data"], "eventId": None}


async def _core_error(params: dict) -> dict:
    session = _server().open_session(session_id="core", peer=NullPeer())
    outcome = await session.handle_request("server/discover", params, request_key=1, trace_id="t")
    return jsonrpc.encode_rejection(1, outcome)["error"]


def test_a_notification_with_an_unsupported_version_header_is_refused(wire) -> None:
    response = wire.http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                              headers=wire.headers(version="banana"))
    assert response.status_code == 400
    assert _error(response)["code"] == jsonrpc.ERROR_CODES[ErrorCode.UNSUPPORTED_PROTOCOL_VERSION]


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel", "resources/subscribe", "unknown/method"])
def test_methods_2026_does_not_have_are_404(wire, method) -> None:
    response, [error] = wire.modern(method, {"level": "info", "uri": "demo://greeting", "protocolVersion": MODERN,
                                             "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}})
    assert response.status_code == STATUS[ErrorCode.METHOD_NOT_FOUND].rpc == 404
    assert error["error"]["code"] == jsonrpc.METHOD_NOT_FOUND


def test_missing_capability_is_400(wire) -> None:
    response, [error] = wire.modern("tools/call", {"name": "ask_name", "arguments": {}}, name="ask_name")
    assert response.status_code == 400
    assert error["error"]["code"] == jsonrpc.ERROR_CODES[ErrorCode.MISSING_CLIENT_CAPABILITY]


def test_get_and_delete_are_405_and_notifications_202(wire) -> None:
    headers = wire.headers(version=MODERN)
    assert wire.http.get("/mcp", headers={**headers, "accept": "text/event-stream"}).status_code == 405
    assert wire.http.delete("/mcp", headers=headers).status_code == 405
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": modern_params({"requestId": 1})}
    assert wire.http.post("/mcp", json=note, headers=headers).status_code == 202


@pytest.mark.parametrize(("headers", "arguments", "ok"), [
    ({"mcp-param-region": "eu", "mcp-param-count": "3"}, {"region": "eu", "count": 3}, True),
    ({"mcp-param-region": "=?base64?ZXU=?="}, {"region": "eu"}, True),
    ({}, {}, True),
    ({}, {"region": "eu"}, False),
    ({"mcp-param-region": "us"}, {"region": "eu"}, False),
    ({"mcp-param-count": "03x"}, {"count": 3}, False),
    ({"mcp-param-region": "eu"}, {}, False),
])
def test_param_headers(wire, headers, arguments, ok) -> None:
    message = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
               "params": modern_params({"name": "routed", "arguments": arguments})}
    response = wire.http.post("/mcp", json=message, headers={
        **wire.headers({"mcp-method": "tools/call", "mcp-name": "routed"}, version=MODERN), **headers})
    assert (response.status_code == 200) is ok
    if not ok:
        assert _error(response)["code"] == HEADER_MISMATCH


def test_listen_stream_acknowledges_and_delivers_list_changes(live) -> None:
    async def scenario() -> list[dict]:
        wire = Wire(live.base)
        message = {"jsonrpc": "2.0", "id": "L1", "method": "subscriptions/listen",
                   "params": modern_params({"notifications": {"toolsListChanged": True}})}
        headers = wire.headers({"mcp-method": "subscriptions/listen"}, version=MODERN)
        frames: list[dict] = []
        async with httpx.AsyncClient(base_url=live.base, timeout=10) as client:
            async with client.stream("POST", "/mcp", json=message, headers=headers) as stream:
                async for line in stream.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    frames.append(json.loads(line[5:]))
                    if len(frames) == 1:
                        wire.modern("tools/call", {"name": "touch", "arguments": {}}, name="touch")
                    else:
                        break
        wire.close()
        return frames

    ack, changed = asyncio.run(scenario())
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert changed["method"] == "notifications/tools/list_changed"
    assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L1"


def test_listen_streams_end_with_a_result_on_shutdown() -> None:
    async def scenario(live) -> list[dict]:
        message = {"jsonrpc": "2.0", "id": 77, "method": "subscriptions/listen",
                   "params": modern_params({"notifications": {"toolsListChanged": True}})}
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
                   "mcp-protocol-version": MODERN, "mcp-method": "subscriptions/listen"}
        frames: list[dict] = []
        async with httpx.AsyncClient(base_url=live.base, timeout=10) as client:
            async with client.stream("POST", "/mcp", json=message, headers=headers) as stream:
                async for line in stream.aiter_lines():
                    if line.startswith("data:"):
                        frames.append(json.loads(line[5:]))
                        if len(frames) == 1:
                            live._uvicorn.should_exit = True  # begin a graceful shutdown
        return frames

    with live_server(_server()) as live:
        frames = asyncio.run(scenario(live))
    assert frames[-1]["id"] == 77 and frames[-1]["result"]["resultType"] == "complete"
    assert frames[-1]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 77
