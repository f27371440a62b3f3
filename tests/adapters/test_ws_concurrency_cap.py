"""WebSocket calls count against the HTTP app's concurrency cap (issue 30).

Before: sockets mounted in the HTTP app skipped `max_concurrent_requests`, so 1,024 sockets × 512 calls in
flight each ran whatever they were sent. Now every call on every socket takes a slot of the same cap as
the HTTP requests; beyond it the call gets the dialect's busy error frame (-32005, its own id) on a socket
that stays open, and an HTTP POST meanwhile gets 503. What was admitted is answered as ever.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from hexmcp.adapters.ws import WsConfig, WsEndpoint
from tests.adapters.http_live import live_server

from ..fixtures.ws_live import ChatGptClient, ws_demo_server
from ..support.holding_tool import Gauge, add_hold_tool

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

CAP = 4
PER_SOCKET = 4


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def gauge() -> Gauge:
    return Gauge()


@pytest.fixture(scope="module")
def live(gauge: Gauge):
    server = add_hold_tool(ws_demo_server(), gauge)
    endpoint = WsEndpoint(server, WsConfig())
    with live_server(server, max_concurrent_requests=CAP, extra_routes={"/ws": endpoint}) as served:
        yield served


async def _calls(client: ChatGptClient, seconds: float) -> list[dict]:
    ids = [client.next_id() for _ in range(PER_SOCKET)]
    for request_id in ids:
        await client.send({"id": request_id, "method": "tools/call",
                           "params": {"name": "hold", "arguments": {"seconds": seconds}}})
    answers = [await client.recv() for _ in ids]
    assert sorted(answer["id"] for answer in answers) == ids  # every call answered, with its own id
    return answers


async def test_calls_on_many_sockets_share_the_http_concurrency_cap(live, gauge: Gauge) -> None:
    url = f"ws://127.0.0.1:{live.config.port}/ws"
    gauge.peak = 0
    async with ChatGptClient.connect(url) as first, ChatGptClient.connect(url) as second:
        await first.initialize()
        await second.initialize()
        calls = asyncio.gather(_calls(first, 1.0), _calls(second, 1.0))
        async with asyncio.timeout(10):  # the admitted calls are running: every slot is taken
            while live.app.limit.in_flight < CAP:
                await asyncio.sleep(0.01)
        async with httpx.AsyncClient(base_url=live.base, timeout=10) as http:
            refused = await http.post("/mcp/tools/call", json={"name": "echo", "arguments": {"text": "x"}})
        answers = [answer for socket_answers in await calls for answer in socket_answers]
        held = [answer for answer in answers if "result" in answer]
        busy = [answer for answer in answers if "error" in answer]
        assert len(held) == CAP and all(a["result"]["content"][0]["text"] == "held" for a in held)
        assert len(busy) == 2 * PER_SOCKET - CAP
        assert all(a["error"]["code"] == -32005 and "in flight" in a["error"]["message"] for a in busy)
        assert all("jsonrpc" not in a for a in busy)  # the ChatGPT dialect's frames
        assert gauge.peak == CAP
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        # The sockets stay open and serve again once the slots are back.
        assert (await first.call("ping"))["result"] == {}
        assert (await second.call("tools/call", {"name": "echo", "arguments": {"text": "y"}}))["result"][
            "content"][0]["text"] == "y"
    deadline = time.monotonic() + 5
    while live.app.limit.in_flight and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert live.app.limit.in_flight == 0
