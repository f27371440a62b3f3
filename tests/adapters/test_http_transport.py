"""Handshake-era Streamable HTTP over raw HTTP: every status rule, sessions, SSE framing and resumption."""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import pytest

from hexmcp.wire import jsonrpc
from hexmcp.adapters.http import STATUS
from hexmcp.core import ErrorCode, ToolContext, versions
from tests.adapters.http_live import live_server
from tests.adapters.http_wire import ACCEPT_BOTH, Wire, parse_sse
from tests.fixtures.demo_server import build_demo_server

pytestmark = pytest.mark.timeout(30)
VISIBLE_ASCII = re.compile(r"^[\x21-\x7e]+$")
ELICIT_ANSWER = {"action": "accept", "content": {"name": "Ada"}}


def _server():
    server = build_demo_server()

    @server.tool()
    async def announce(ctx: ToolContext) -> str:
        """Tells every client the tool list changed."""
        server.notify_list_changed("tools")
        return "announced"

    return server


@pytest.fixture(scope="module")
def live():
    with live_server(_server(), max_body_bytes=64 * 1024) as server:
        yield server


def test_every_semantic_code_has_an_http_status() -> None:
    assert set(STATUS) == set(ErrorCode)


def test_initialize_issues_a_visible_ascii_session_id(wire) -> None:
    result = wire.initialize()
    assert result["protocolVersion"] == versions.LATEST_HANDSHAKE_VERSION
    assert VISIBLE_ASCII.match(wire.session_id)
    response, [answer] = wire.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    assert answer["result"]["content"][0]["text"] == "x"
    assert wire.transcript.checked >= 2


def test_session_lifecycle_statuses(wire) -> None:
    response, _ = wire.request("tools/list")
    assert response.status_code == 200  # no session id: served one-shot (ADR 0501)
    wire.initialize()
    session_id = wire.session_id
    assert wire.http.delete("/mcp", headers={"mcp-session-id": session_id}).status_code == 200
    response, [error] = wire.request("tools/list")
    assert response.status_code == 404 and error["error"]["code"] == jsonrpc.ERROR_CODES[ErrorCode.SESSION_NOT_FOUND]
    assert wire.http.delete("/mcp", headers={"mcp-session-id": session_id}).status_code == 404
    assert wire.http.delete("/mcp").status_code == 400
    wire.session_id = "no-such-session"
    assert wire.request("ping")[0].status_code == 404


def test_notifications_and_responses_get_202(wire) -> None:
    wire.initialize()
    response = wire.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}})
    assert response.status_code == 202 and response.content == b""
    response = wire.post({"jsonrpc": "2.0", "id": "s-unknown", "result": {}})
    assert response.status_code == 202


@pytest.mark.parametrize(("headers", "body", "status"), [
    ({"content-type": "text/plain"}, b"{}", 415),
    ({"accept": "text/html"}, b"{}", 406),
    ({}, b"{not json", 400),
    ({}, b"[]", 400),
])
def test_malformed_posts(wire, headers, body, status) -> None:
    response = wire.http.post("/mcp", content=body, headers={**wire.headers(), **headers})
    assert response.status_code == status
    if status == 400 and body.startswith(b"{"):
        assert response.json()["error"]["code"] == jsonrpc.PARSE_ERROR


def test_unsupported_http_methods_get_405(wire) -> None:
    response = wire.http.put("/mcp", content=b"{}", headers=wire.headers())
    assert response.status_code == 405 and "POST" in response.headers["allow"]


def test_body_limit_is_enforced_while_streaming(wire, live) -> None:
    big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 100_000}}).encode()
    assert wire.http.post("/mcp", content=big, headers=wire.headers()).status_code == 413

    def chunks():  # no Content-Length: the limit must bite on the bytes as they arrive
        for start in range(0, len(big), 8192):
            yield big[start:start + 8192]

    assert wire.http.post("/mcp", content=chunks(), headers=wire.headers()).status_code == 413


def test_unknown_protocol_version_header_is_400(wire) -> None:
    wire.initialize()
    response, _ = wire.request("tools/list", version="2099-01-01")
    assert response.status_code == 400


def test_progress_switches_to_sse_with_ids_and_priming(wire) -> None:
    wire.initialize()
    response = wire.post({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                          "params": {"name": "slow", "arguments": {"seconds": 0.05}, "_meta": {"progressToken": "t"}}})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(response.text)
    assert events[0]["data"] == "" and "id" in events[0] and "retry" in events[0]  # SEP-1699 priming event
    assert all("id" in event for event in events)
    assert len({event["id"] for event in events}) == len(events)
    messages = wire.messages(response)
    assert [m["params"]["progress"] for m in messages[:-1]] == [1, 2, 3]
    assert messages[-1]["id"] == 7 and "result" in messages[-1]


def test_sse_only_clients_always_get_a_stream(wire) -> None:
    wire.initialize()
    response = wire.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"accept": "text/event-stream"})
    assert response.headers["content-type"].startswith("text/event-stream")
    assert wire.messages(response)[-1] == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_batches_only_on_2025_03_26(wire) -> None:
    wire.initialize(versions.V2025_03_26)
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    response = wire.post(batch, version=versions.V2025_03_26)
    assert response.status_code == 200 and sorted(m["id"] for m in response.json()) == [1, 2]
    other = Wire(wire.http.base_url)
    other.initialize()
    assert other.post(batch).status_code == 400
    other.close()


def test_resumption_with_last_event_id(live) -> None:
    async def scenario() -> list[dict]:
        wire = Wire(live.base)
        wire.initialize()
        headers = wire.headers()
        async with httpx.AsyncClient(base_url=live.base, timeout=10) as client:
            body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                    "params": {"name": "slow", "arguments": {"seconds": 0.6, "steps": 3},
                               "_meta": {"progressToken": "r"}}}
            last_id = None
            async with client.stream("POST", "/mcp", json=body, headers=headers) as response:
                async for line in response.aiter_lines():
                    if line.startswith("id:"):
                        last_id = line[3:].strip()
                    if line.startswith("data:") and "progress" in line:
                        break  # drop the connection after the first progress event
            resumed = await client.get("/mcp", headers={**headers, "accept": "text/event-stream",
                                                        "last-event-id": last_id})
        wire.close()
        return [json.loads(e["data"]) for e in parse_sse(resumed.text) if e.get("data")]

    messages = asyncio.run(scenario())
    assert [m["params"]["progress"] for m in messages if m.get("method")] == [2, 3]
    assert messages[-1]["id"] == 5 and messages[-1]["result"]["content"][0]["text"] == "slept 0.6"


def test_standalone_get_stream_carries_list_changed(live) -> None:
    async def scenario() -> tuple[int, list[dict]]:
        wire = Wire(live.base)
        wire.initialize()
        headers = {**wire.headers(), "accept": "text/event-stream"}
        received: list[dict] = []
        async with httpx.AsyncClient(base_url=live.base, timeout=10) as client:
            async with client.stream("GET", "/mcp", headers=headers) as stream:
                second = await client.get("/mcp", headers=headers)
                wire.request("tools/call", {"name": "announce", "arguments": {}})
                async for line in stream.aiter_lines():
                    if line.startswith("data:") and line[5:].strip():
                        received.append(json.loads(line[5:]))
                        break
        wire.close()
        return second.status_code, received

    conflict, received = asyncio.run(scenario())
    assert conflict == 409
    assert received == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}]


def test_get_needs_an_event_stream_accept(wire) -> None:
    wire.initialize()
    assert wire.http.get("/mcp", headers={**wire.headers(), "accept": "application/json"}).status_code == 406


def test_server_request_answered_by_a_separate_post(live) -> None:
    async def scenario() -> dict:
        wire = Wire(live.base)
        wire.initialize(capabilities={"elicitation": {}})
        headers = wire.headers()
        async with httpx.AsyncClient(base_url=live.base, timeout=10) as client:
            body = {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "ask_name", "arguments": {}}}
            wire.transcript.sent(body)
            async with client.stream("POST", "/mcp", json=body, headers=headers) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                async for line in response.aiter_lines():
                    if not line.startswith("data:") or not line[5:].strip():
                        continue
                    message = json.loads(line[5:])
                    wire.transcript.received(message)
                    if message.get("method") == "elicitation/create":
                        answer = {"jsonrpc": "2.0", "id": message["id"], "result": ELICIT_ANSWER}
                        reply = await client.post("/mcp", json=answer, headers=headers)
                        assert reply.status_code == 202
                    elif message.get("id") == 11:
                        wire.close()
                        return message
        raise AssertionError("no result")

    result = asyncio.run(scenario())
    assert result["result"]["content"][0]["text"] == "Hello, Ada!"


def test_stateless_mode_serves_without_sessions() -> None:
    with live_server(build_demo_server(), stateless=True) as live:
        wire = Wire(live.base)
        response, [answer] = wire.request("initialize", {"protocolVersion": versions.V2025_06_18,
                                                         "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}})
        assert "mcp-session-id" not in response.headers
        assert answer["result"]["protocolVersion"] == versions.V2025_06_18
        response, [answer] = wire.request("tools/call", {"name": "echo", "arguments": {"text": "lb"}},
                                          version=versions.V2025_06_18)
        assert response.status_code == 200 and answer["result"]["content"][0]["text"] == "lb"
        assert wire.http.get("/mcp", headers={"accept": "text/event-stream"}).status_code == 405
        assert wire.http.delete("/mcp").status_code == 405
        wire.close()


def test_accept_header_mentioning_both_types_prefers_json(wire) -> None:
    wire.initialize()
    response, _ = wire.request("ping", extra={"accept": ACCEPT_BOTH})
    assert response.headers["content-type"] == "application/json"


def test_a_rejected_initialize_names_no_session_and_may_be_retried(wire) -> None:
    # The failed initialize's session is thrown away, so its id must not be handed out.
    response, [error] = wire.request("initialize", {"capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}})
    assert error["error"]["code"] == jsonrpc.INVALID_PARAMS
    assert "mcp-session-id" not in response.headers
    assert wire.initialize()["protocolVersion"] == versions.LATEST_HANDSHAKE_VERSION
