"""stdio's line reader in memory: bytes in at arbitrary cuts, the real `RpcConnection` and core behind it.

The reader starts plain requests from its read callback and sends everything that must be awaited
(`initialize`, notifications, malformed lines) through one ordered lane. Whatever the mix and however
the bytes are cut, requests are admitted in the order they arrived and each is answered exactly once.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexmcp.wire import jsonrpc
from hexmcp.wire.lines import LineSplitter
from hexmcp.adapters.rpc_connection import RpcConnection
from hexmcp.adapters.stdio.transport import _LineReader
from hexmcp.core import ErrorCode, versions

from ..fixtures.demo_server import build_demo_server
from ..support.peer import initialize_params

LIMIT = 4096
PARSE_ERROR = jsonrpc.ERROR_CODES[ErrorCode.PARSE_ERROR]
INVALID_REQUEST = jsonrpc.ERROR_CODES[ErrorCode.INVALID_REQUEST]

# What forces the ordered lane, and the error code it is answered with (None: no answer).
LANE_ITEMS: dict[str, tuple[bytes, int | None]] = {
    "garbage": (b'{"jsonrpc": "2.0", "id": ', PARSE_ERROR),
    "not an object": (b"[]", INVALID_REQUEST),  # an empty batch
    "cancellation of nothing": (json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                            "params": {"requestId": "nobody"}}).encode(), None),
    "progress nobody asked for": (json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                                              "params": {"progressToken": "t", "progress": 1}}).encode(), None),
}


class RecordingWire:
    """What the reader writes through: the sent messages, and how many bursts it announced."""

    def __init__(self) -> None:
        self.sent: list[Any] = []
        self.bursts = 0

    async def send(self, message: Any) -> None:
        self.sent.append(message)

    def expect_burst(self) -> None:
        self.bursts += 1


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


async def _serve(stream: bytes, cuts: list[int]) -> tuple[list[int], RecordingWire]:
    server = build_demo_server()
    admitted: list[int] = []

    @server.tool()
    async def record(n: int) -> str:
        """Notes the order calls run in."""
        admitted.append(n)
        return str(n)

    wire = RecordingWire()
    connection = RpcConnection(server, wire.send, transport="stdio")
    reader = _LineReader(connection, wire, LineSplitter(LIMIT), LIMIT)  # type: ignore[arg-type]
    edges = [0, *sorted(set(cut % (len(stream) + 1) for cut in cuts)), len(stream)]
    for start, end in zip(edges, edges[1:]):
        if end > start:
            reader.data_received(stream[start:end])
    reader.eof_received()
    await asyncio.wait_for(reader.finished(), 10)
    await asyncio.wait_for(connection.drain(), 10)
    await connection.close()
    return admitted, wire


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(st.one_of(st.just("call"), st.sampled_from(sorted(LANE_ITEMS))), max_size=25),
       cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_requests_are_admitted_in_arrival_order_and_answered_once(items: list[str], cuts: list[int]) -> None:
    stream = _line({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                    "params": initialize_params(versions.LATEST_HANDSHAKE_VERSION)})
    stream += _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
    calls, errors = [], []
    for index, item in enumerate(items):
        if item == "call":
            calls.append(index)
            stream += _line({"jsonrpc": "2.0", "id": index, "method": "tools/call",
                             "params": {"name": "record", "arguments": {"n": index}}})
        else:
            line, code = LANE_ITEMS[item]
            stream += line + b"\n"
            if code is not None:
                errors.append(code)

    admitted, wire = asyncio.run(_serve(stream, cuts))

    assert admitted == calls, "requests ran in another order than they arrived"
    results = [message for message in wire.sent if "result" in message]
    assert [message["id"] for message in results] == ["init", *calls]
    assert all(not message["result"].get("isError") for message in results)
    assert sorted(message["error"]["code"] for message in wire.sent if "error" in message) == sorted(errors)


def test_a_read_that_starts_several_requests_announces_a_burst() -> None:
    stream = _line({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                    "params": initialize_params(versions.LATEST_HANDSHAKE_VERSION)})
    stream += _line({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def scenario() -> RecordingWire:
        server = build_demo_server()
        wire = RecordingWire()
        connection = RpcConnection(server, wire.send, transport="stdio")
        reader = _LineReader(connection, wire, LineSplitter(LIMIT), LIMIT)  # type: ignore[arg-type]
        reader.data_received(stream)
        for _ in range(10):
            await asyncio.sleep(0)
        reader.data_received(_line({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        assert wire.bursts == 0, "a lone request announced a burst"
        reader.data_received(b"".join(_line({"jsonrpc": "2.0", "id": n, "method": "ping"}) for n in (2, 3, 4)))
        assert wire.bursts == 1
        reader.eof_received()
        await reader.finished()
        await connection.drain()
        return wire

    wire = asyncio.run(scenario())
    assert sorted(message["id"] for message in wire.sent if message.get("id") != "init") == [1, 2, 3, 4]


def test_a_message_whose_handling_fails_is_logged_and_the_next_ones_are_served() -> None:
    async def scenario() -> RecordingWire:
        server = build_demo_server()
        wire = RecordingWire()
        connection = RpcConnection(server, wire.send, transport="stdio")
        receive = connection.receive

        async def failing_on_a_marker(value: Any) -> None:
            if isinstance(value, dict) and value.get("method") == "notifications/marker":
                raise RuntimeError("a bug in handling one message")
            await receive(value)

        connection.receive = failing_on_a_marker  # type: ignore[method-assign]
        reader = _LineReader(connection, wire, LineSplitter(LIMIT), LIMIT)  # type: ignore[arg-type]
        reader.data_received(_line({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                                    "params": initialize_params(versions.LATEST_HANDSHAKE_VERSION)})
                             + _line({"jsonrpc": "2.0", "method": "notifications/marker"})
                             + _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
                             + _line({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        reader.eof_received()
        await asyncio.wait_for(reader.finished(), 10)
        await connection.drain()
        return wire

    wire = asyncio.run(scenario())
    assert [message["id"] for message in wire.sent if "result" in message] == ["init", 1]


def test_nothing_read_after_stop_is_served() -> None:
    async def scenario() -> RecordingWire:
        server = build_demo_server()
        wire = RecordingWire()
        connection = RpcConnection(server, wire.send, transport="stdio")
        reader = _LineReader(connection, wire, LineSplitter(LIMIT), LIMIT)  # type: ignore[arg-type]
        reader.data_received(_line({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                                    "params": initialize_params(versions.LATEST_HANDSHAKE_VERSION)}))
        await asyncio.sleep(0.1)
        reader.stop()
        reader.data_received(_line({"jsonrpc": "2.0", "id": 1, "method": "ping"}))  # a reader thread's last chunk
        reader.eof_received()
        await asyncio.wait_for(reader.finished(), 10)
        await connection.drain()
        return wire

    wire = asyncio.run(scenario())
    assert [message.get("id") for message in wire.sent] == ["init"]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12)


@given(JSON_VALUES)
def test_a_line_is_the_message_and_one_newline(value: Any) -> None:
    """The wire writer's encoding (`dumps_line`, newline written by orjson) is `dumps` plus b"\\n", the
    standard library's fallback for integers beyond 64 bits included."""
    line = jsonrpc.dumps_line(value)
    assert line == jsonrpc.dumps(value) + b"\n"
    assert line.count(b"\n") == 1 and json.loads(line) == json.loads(jsonrpc.dumps(value))
