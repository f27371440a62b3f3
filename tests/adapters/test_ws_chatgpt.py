"""The WebSocket adapter over a real uvicorn socket: both dialects, concurrency, bad frames, the Peer.

A raw `websockets` client speaks the ChatGPT dialect by hand (tests/fixtures/ws_live.py), so what is
asserted is what travels on the wire: no `jsonrpc` member in that dialect, strict JSON-RPC 2.0 under
subprotocol `mcp`, one answer per request, error frames for bad input on a socket that keeps serving.
"""

from __future__ import annotations

import json
import random

import pytest
from websockets.asyncio.client import connect

from hexmcp.wire import jsonrpc
from hexmcp.adapters.ws import MCP_SUBPROTOCOL
from hexmcp.adapters.ws.connection import SESSION_HEADER

from ..fixtures.ws_live import NEW_TOOL, PROTOCOL_VERSION, ChatGptClient, live_ws, ws_demo_server

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]


@pytest.fixture(scope="module")
def live():
    with live_ws(ws_demo_server()) as server:
        yield server


def text(response: dict) -> str:
    return "".join(block["text"] for block in response["result"]["content"])


async def test_chatgpt_dialect_round_trip_has_no_jsonrpc_member(live) -> None:
    async with ChatGptClient.connect(live.url) as client:
        assert client.ws.subprotocol is None
        assert client.ws.response.headers[SESSION_HEADER.decode()]
        init = await client.initialize()
        assert init["result"]["protocolVersion"] == PROTOCOL_VERSION
        tools = await client.call("tools/list")
        added = await client.call("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        unknown = await client.call("no/such/method")
        for frame in (init, tools, added, unknown):
            assert "jsonrpc" not in frame
        assert "echo" in {tool["name"] for tool in tools["result"]["tools"]}
        assert added["result"]["structuredContent"] == {"sum": 5}
        assert set(unknown) == {"id", "error"} and unknown["error"]["code"] == jsonrpc.METHOD_NOT_FOUND
        assert {"code", "message", "data"} <= set(unknown["error"]) and unknown["error"]["data"]["eventId"]


async def test_each_socket_is_its_own_session(live) -> None:
    async with ChatGptClient.connect(live.url) as one, ChatGptClient.connect(live.url) as two:
        header = SESSION_HEADER.decode()
        assert one.ws.response.headers[header] != two.ws.response.headers[header]
        await one.initialize()
        # `two` never initialized: the lifecycle is per connection.
        refused = await two.call("tools/list")
        assert refused["error"]["code"] == jsonrpc.INVALID_REQUEST
        assert "result" in await one.call("tools/list")


async def test_a_frame_with_jsonrpc_is_still_understood(live) -> None:
    async with ChatGptClient.connect(live.url) as client:
        await client.initialize()
        await client.send({"jsonrpc": "2.0", "id": "x", "method": "ping"})
        assert await client.response("x") == {"id": "x", "result": {}}
        await client.send({"jsonrpc": "1.0", "id": "y", "method": "ping"})
        assert (await client.response("y"))["error"]["code"] == jsonrpc.INVALID_REQUEST


async def test_bad_frames_get_error_frames_and_the_socket_keeps_serving(live) -> None:
    async with ChatGptClient.connect(live.url) as client:
        await client.initialize()
        bad = [("{not json", jsonrpc.PARSE_ERROR), (b'{"id":1,"method":"ping"}', jsonrpc.INVALID_REQUEST),
               (json.dumps([{"id": 1, "method": "ping"}]), jsonrpc.INVALID_REQUEST),
               (json.dumps({"id": True, "method": "ping"}), jsonrpc.INVALID_REQUEST),
               (json.dumps({"id": 1.5, "method": "ping"}), jsonrpc.INVALID_REQUEST),
               (json.dumps({"id": 7, "method": 42}), jsonrpc.INVALID_REQUEST),
               (json.dumps("just a string"), jsonrpc.INVALID_REQUEST),
               (json.dumps({"id": 8}), jsonrpc.INVALID_REQUEST)]
        for frame, code in bad:
            await client.ws.send(frame)
            answer = await client.recv()
            assert "jsonrpc" not in answer
            assert answer["error"]["code"] == code, (frame, answer)
            assert answer["error"]["data"]["eventId"]
        # The id is echoed when it could be read, null otherwise.
        assert answer["id"] == 8
        assert (await client.call("tools/call", {"name": "echo", "arguments": {"text": "still here"}}))["result"]


async def test_64_pipelined_calls_are_each_answered_once(live) -> None:
    async with ChatGptClient.connect(live.url) as client:
        await client.initialize()
        expected: dict[int, str] = {}
        frames = []
        for i in range(64):
            request_id = client.next_id()
            if i % 2:
                delay = random.Random(i).uniform(0.0, 0.2)  # answers finish out of order
                frames.append({"id": request_id, "method": "tools/call",
                               "params": {"name": "slow", "arguments": {"seconds": delay, "steps": 1}}})
                expected[request_id] = f"slept {delay}"
            else:
                frames.append({"id": request_id, "method": "tools/call",
                               "params": {"name": "echo", "arguments": {"text": f"echo {i}"}}})
                expected[request_id] = f"echo {i}"
        for frame in frames:
            await client.send(frame)
        answers: dict[int, dict] = {}
        order = []
        while len(answers) < 64:
            answer = await client.recv()
            assert answer["id"] not in answers, "answered twice"
            answers[answer["id"]] = answer
            order.append(answer["id"])
        assert {i: text(a) for i, a in answers.items()} == expected
        assert order != sorted(order)  # proves they really ran concurrently
        ping = await client.call("ping")  # nothing else was queued behind the 64
        assert ping["result"] == {}


async def test_cancellation_stops_the_request_and_it_gets_no_answer(live) -> None:
    async with ChatGptClient.connect(live.url) as client:
        await client.initialize()
        request_id = client.next_id()
        await client.send({"id": request_id, "method": "tools/call",
                           "params": {"name": "slow", "arguments": {"seconds": 3, "steps": 30},
                                      "_meta": {"progressToken": "p1"}}})
        first = await client.recv()
        assert first["method"] == "notifications/progress" and first["params"]["progressToken"] == "p1"
        await client.send({"method": "notifications/cancelled", "params": {"requestId": request_id}})
        ping_id = client.next_id()
        await client.send({"id": ping_id, "method": "ping"})
        while (message := await client.recv()).get("id") != ping_id:
            assert message.get("method") == "notifications/progress"  # ones already on their way
        with pytest.raises(TimeoutError):
            message = await client.recv(timeout=0.5)
            pytest.fail(f"the cancelled request still produced {message}")


async def test_elicitation_round_trip_on_the_same_socket(live) -> None:
    async with ChatGptClient.connect(live.url) as client:
        await client.initialize({"elicitation": {}})
        call_id = client.next_id()
        await client.send({"id": call_id, "method": "tools/call", "params": {"name": "ask_name", "arguments": {}}})
        question = await client.recv()
        assert question["method"] == "elicitation/create" and "jsonrpc" not in question
        # While the server waits for our answer, the socket still serves other requests.
        assert (await client.call("ping"))["result"] == {}
        await client.send({"id": question["id"], "result": {"action": "accept", "content": {"name": "Ada"}}})
        assert text(await client.response(call_id)) == "Hello, Ada!"


async def test_log_messages_and_progress_reach_the_client(live) -> None:
    async with ChatGptClient.connect(live.url) as client:
        await client.initialize()
        await client.call("logging/setLevel", {"level": "info"})
        answer = await client.call("tools/call", {"name": "chatty", "arguments": {}})
        assert text(answer) == "logged"
        levels = [n["params"]["level"] for n in client.notifications if n["method"] == "notifications/message"]
        assert levels == ["info", "error"]
        client.notifications.clear()
        await client.call("tools/call", {"name": "slow", "arguments": {"seconds": 0.05, "steps": 2},
                                         "_meta": {"progressToken": 9}})
        assert [n["params"]["progress"] for n in client.notifications] == [1, 2]


async def test_list_changed_reaches_every_ready_session_both_initialized_spellings() -> None:
    with live_ws(ws_demo_server()) as server:
        async with ChatGptClient.connect(server.url) as one, ChatGptClient.connect(server.url) as two:
            await one.call("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                          "clientInfo": {"name": "one", "version": "0"}})
            await one.send({"method": "initialized"})  # the ChatGPT spelling
            await two.initialize()  # notifications/initialized
            await one.call("tools/call", {"name": "grow", "arguments": {}})
            for client in (one, two):
                while not any(n["method"] == "notifications/tools/list_changed" for n in client.notifications):
                    client.notifications.append(await client.recv(timeout=5))
            tools = await two.call("tools/list")
            assert NEW_TOOL in {tool["name"] for tool in tools["result"]["tools"]}


async def test_mcp_subprotocol_is_strict_json_rpc(live) -> None:
    async with connect(live.url, subprotocols=[MCP_SUBPROTOCOL]) as ws:
        assert ws.subprotocol == MCP_SUBPROTOCOL
        await ws.send(json.dumps({"id": 1, "method": "ping"}))  # no jsonrpc member: invalid here
        refused = json.loads(await ws.recv())
        assert refused["jsonrpc"] == "2.0" and refused["error"]["code"] == jsonrpc.INVALID_REQUEST
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "initialize",
                                  "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                             "clientInfo": {"name": "strict", "version": "0"}}}))
        init = json.loads(await ws.recv())
        assert init["jsonrpc"] == "2.0" and init["id"] == 2 and init["result"]["protocolVersion"] == PROTOCOL_VERSION
        await ws.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                  "params": {"name": "echo", "arguments": {"text": "strict"}}}))
        answer = json.loads(await ws.recv())
        assert answer == {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "strict"}]}}


async def test_an_unknown_subprotocol_falls_back_to_the_chatgpt_dialect(live) -> None:
    async with connect(live.url, subprotocols=["mcp", "chatgpt"]) as ws:
        assert ws.subprotocol == MCP_SUBPROTOCOL  # first known one wins
    async with connect(live.url, subprotocols=["something-else"]) as ws:
        assert ws.subprotocol is None  # RFC 6455 lets the server pick none; we then speak ChatGPT
        await ws.send(json.dumps({"id": 1, "method": "ping"}))
        assert json.loads(await ws.recv()) == {"id": 1, "result": {}}
