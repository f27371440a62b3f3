"""A request id reused while a request with that id is still in flight, over real stdio, WebSocket and HTTP.

MCP forbids reusing an id within a session; a client that does it anyway must get a clear -32600 for the
second request, and the first must go on as if nothing happened: answered with its own result, its
progress on its own stream, and a `notifications/cancelled` naming the id reaching the request that runs.
(Before, the second request took over the first's in-flight entry: one cancellation silenced both, and
over HTTP the first's progress lost its stream.) Once the first is answered, the id is free again.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx
import pytest

from tests.adapters.http_live import live_server
from tests.adapters.http_wire import ACCEPT_BOTH, parse_sse
from tests.fixtures.demo_server import build_demo_server
from tests.fixtures.ws_live import ChatGptClient, live_ws, ws_demo_server

pytestmark = pytest.mark.timeout(60)


def _slow(request_id: Any, seconds: float, *, steps: int = 1, token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "slow", "arguments": {"seconds": seconds, "steps": steps}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _is_in_flight_refusal(message: dict[str, Any], request_id: Any) -> bool:
    error = message.get("error") or {}
    return message.get("id") == request_id and error.get("code") == -32600 and "in flight" in error.get("message", "")


# --- stdio ---------------------------------------------------------------------------------------------


def _raw_lines(server, until_id: Any, timeout: float = 10.0) -> list[dict[str, Any]]:
    """stdout lines up to and including the answer to `until_id` (raw: the transcript would refuse the
    second answer to one id, which is what the old behaviour could produce)."""
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        message = json.loads(server._lines.get(timeout=max(0.01, deadline - time.monotonic())))
        seen.append(message)
        if isinstance(message, dict) and message.get("id") == until_id and "method" not in message:
            return seen


def _reuse_id_on_stdio(server, request_id: Any, first_seconds: float) -> None:
    """A slow call, then a second under the same id while the first runs: the second is refused at once."""
    server.write((json.dumps(_slow(request_id, first_seconds)) + "\n").encode())
    server.write((json.dumps(_slow(request_id, 0.1)) + "\n").encode())
    [refusal] = _raw_lines(server, request_id)
    assert _is_in_flight_refusal(refusal, request_id), refusal


def test_stdio_refuses_a_reused_id_and_serves_the_first(stdio_server) -> None:
    server = stdio_server()
    server.initialize()
    _reuse_id_on_stdio(server, 5, 1.0)
    [answer] = _raw_lines(server, 5)
    assert answer["result"]["content"][0]["text"] == "slept 1.0", answer
    # Answered, the id is free again.
    server.write((json.dumps(_slow(5, 0.1)) + "\n").encode())
    [again] = _raw_lines(server, 5)
    assert again["result"]["content"][0]["text"] == "slept 0.1", again


def test_stdio_a_cancellation_after_a_reused_id_stops_only_the_request_that_runs(stdio_server) -> None:
    server = stdio_server()
    server.initialize()
    _reuse_id_on_stdio(server, 7, 5.0)
    server.write((json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                              "params": {"name": "slow", "arguments": {"seconds": 0.5, "steps": 1}}}) + "\n").encode())
    server.notify("notifications/cancelled", {"requestId": 7})
    # Request 8 is untouched, request 7 was cancelled (no answer), and the connection serves on.
    [answer] = _raw_lines(server, 8)
    assert answer["result"]["content"][0]["text"] == "slept 0.5", answer
    assert server.request(9, "ping")["result"] == {}
    assert server.nothing_more(0.5)


# --- WebSocket -----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_websocket_refuses_a_reused_id_and_serves_the_first() -> None:
    with live_ws(ws_demo_server()) as live:
        async with ChatGptClient.connect(live.url) as client:
            await client.initialize()
            first, second = _slow(3, 1.0), _slow(3, 0.1)
            for message in (first, second):
                del message["jsonrpc"]  # the ChatGPT dialect
                await client.send(message)
            refusal = await client.response(3)
            assert _is_in_flight_refusal(refusal, 3), refusal
            answer = await client.response(3)
            assert answer["result"]["content"][0]["text"] == "slept 1.0", answer


# --- HTTP (one session, two POSTs) -------------------------------------------------------------------


@pytest.fixture(scope="module")
def live():
    with live_server(build_demo_server()) as server:
        yield server


def test_http_refuses_a_reused_id_and_the_first_keeps_its_progress_stream(live, wire) -> None:
    wire.initialize()
    headers = wire.headers({"accept": ACCEPT_BOTH})
    first: dict[str, httpx.Response] = {}

    def post_first() -> None:
        with httpx.Client(base_url=live.base, timeout=30) as client:
            first["response"] = client.post("/mcp", content=json.dumps(_slow(11, 1.2, steps=3, token="p")),
                                            headers=headers)

    thread = threading.Thread(target=post_first)
    thread.start()
    time.sleep(0.2)  # the first is in flight (its first progress comes at 0.4 s)
    refused = wire.http.post("/mcp", content=json.dumps(_slow(11, 0.1)), headers=headers)
    thread.join()
    assert refused.status_code == 200, refused.text  # the handshake era answers a served request 200
    assert _is_in_flight_refusal(refused.json(), 11), refused.text
    response = first["response"]
    assert response.status_code == 200
    messages = [json.loads(event["data"]) for event in parse_sse(response.text) if event.get("data")]
    progress = [m["params"]["progress"] for m in messages if m.get("method") == "notifications/progress"]
    assert progress == [1, 2, 3], messages
    assert messages[-1]["result"]["content"][0]["text"] == "slept 1.2"
