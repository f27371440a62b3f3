"""`RpcConnection` in memory: decoded JSON in, the messages it sends recorded, no transport.

What stdio and WebSocket share: requests admitted in arrival order and served in tasks of their own,
batches included; cancellations that find their request however early they come; a connection that
winds down without waiting on requests that only end when told to.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hexmcp.wire import jsonrpc
from hexmcp.adapters.rpc_connection import RpcConnection
from hexmcp.core import ErrorCode, McpServer, ToolContext, versions

from ..fixtures.demo_server import build_demo_server
from ..support.peer import initialize_params, stateless_meta

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

BUSY = jsonrpc.ERROR_CODES[ErrorCode.SERVER_BUSY]


class Gate:
    """A tool that waits until the test opens the gate, counting the calls that got in."""

    def __init__(self, server: McpServer) -> None:
        self.opened = asyncio.Event()
        self.entered = 0

        @server.tool()
        async def gated(ctx: ToolContext) -> str:
            """Waits for the test."""
            self.entered += 1
            await self.opened.wait()
            return "through"


class Wire:
    """An RpcConnection whose sent messages land in a queue."""

    def __init__(self, server: McpServer, **options: Any) -> None:
        self.sent: asyncio.Queue[Any] = asyncio.Queue()
        self.connection = RpcConnection(server, self._record, **options)

    async def _record(self, message: Any) -> None:
        await self.sent.put(message)

    async def next(self, timeout: float = 5.0) -> Any:
        return await asyncio.wait_for(self.sent.get(), timeout)

    def nothing_sent(self) -> bool:
        return self.sent.empty()

    async def initialize(self, version: str) -> None:
        await self.connection.receive(request("init", "initialize", initialize_params(version)))
        assert "result" in await self.next()
        await self.connection.receive({"jsonrpc": "2.0", "method": "notifications/initialized"})


def request(request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def gated_call(request_id: Any) -> dict[str, Any]:
    return request(request_id, "tools/call", {"name": "gated", "arguments": {}})


def cancel(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


@pytest.fixture
def server() -> McpServer:
    return build_demo_server()


async def test_a_cancellation_right_behind_its_request_stops_it(server: McpServer) -> None:
    gate = Gate(server)
    wire = Wire(server)
    await wire.initialize(versions.LATEST_HANDSHAKE_VERSION)
    # As when both arrive in one read: no chance for the request's task to run in between.
    await wire.connection.receive(gated_call("c1"))
    await wire.connection.receive(cancel("c1"))
    await wire.connection.receive(request("after", "ping"))
    assert (await wire.next())["id"] == "after"
    gate.opened.set()
    await wire.connection.drain()
    assert wire.nothing_sent(), "a cancelled request was answered"
    assert gate.entered == 0


async def test_a_batch_is_served_off_the_reader(server: McpServer) -> None:
    gate = Gate(server)
    wire = Wire(server)
    await wire.initialize(versions.V2025_03_26)
    batch = [gated_call(n) for n in range(3)] + [request(3, "ping")]
    await asyncio.wait_for(wire.connection.receive(batch), 5)  # returns without waiting for the gate
    await wire.connection.receive(request("alone", "ping"))
    assert (await wire.next())["id"] == "alone"
    assert wire.connection.in_flight == 3
    gate.opened.set()
    reply = await wire.next()
    assert sorted(item["id"] for item in reply) == [0, 1, 2, 3]
    assert all("result" in item for item in reply)


async def test_batch_items_count_against_the_in_flight_limit(server: McpServer) -> None:
    gate = Gate(server)
    wire = Wire(server, max_in_flight=2)
    await wire.initialize(versions.V2025_03_26)
    await wire.connection.receive([gated_call(n) for n in range(3)])
    await wire.connection.receive(gated_call("single"))
    refused = await wire.next()
    assert refused["id"] == "single" and refused["error"]["code"] == BUSY
    gate.opened.set()
    reply = {item["id"]: item for item in await wire.next()}
    assert "result" in reply[0] and "result" in reply[1]
    assert reply[2]["error"]["code"] == BUSY


async def test_a_batch_item_can_be_cancelled(server: McpServer) -> None:
    gate = Gate(server)
    wire = Wire(server)
    await wire.initialize(versions.V2025_03_26)
    await wire.connection.receive([gated_call("keep"), gated_call("drop"), cancel("drop")])
    await settle()
    gate.opened.set()
    assert [item["id"] for item in await wire.next()] == ["keep"]


async def test_drain_ends_an_open_listen_with_its_result(server: McpServer) -> None:
    wire = Wire(server)
    listen = request(9, "subscriptions/listen", {"_meta": stateless_meta(), "notifications": {}})
    await wire.connection.receive(listen)
    assert (await wire.next())["method"] == "notifications/subscriptions/acknowledged"
    await asyncio.wait_for(wire.connection.drain(), 5)
    answer = await wire.next()
    assert answer["id"] == 9 and "result" in answer
    await wire.connection.close()


async def test_input_ended_fails_requests_waiting_for_the_client(server: McpServer) -> None:
    wire = Wire(server)
    await wire.connection.receive(request("init", "initialize",
                                          initialize_params(versions.LATEST_HANDSHAKE_VERSION, {"elicitation": {}})))
    await wire.next()
    await wire.connection.receive({"jsonrpc": "2.0", "method": "notifications/initialized"})
    await wire.connection.receive(request("ask", "tools/call", {"name": "ask_name", "arguments": {}}))
    assert (await wire.next())["method"] == "elicitation/create"
    wire.connection.input_ended()  # the answer can never come
    await asyncio.wait_for(wire.connection.drain(), 5)
    answer = await wire.next()
    assert answer["id"] == "ask" and answer["result"]["isError"] is True
