"""Invariants of the client's sans-IO parts: targets round-trip, and any server message is survivable.

The dispatcher runs here over an in-memory wire (it records what it is asked to send), since what is
checked is the dispatcher's reading of arbitrary input, not a transport.
"""

from __future__ import annotations

import asyncio
import shlex
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.adapters import jsonrpc
from hexmcp.client import ClientError, ClientErrorCode, Target, Transport
from hexmcp.client.dispatcher import Dispatcher

from ..support.strategies import JSON_VALUES

HOSTS = st.sampled_from(["127.0.0.1", "localhost", "example.com", "[::1]", "mcp.internal"])
PATHS = st.sampled_from(["/mcp", "/ws", "/", "/a/b", "/mcp/"])
URL_TARGETS = st.builds(lambda scheme, host, port, path: f"{scheme}://{host}:{port}{path}",
                        st.sampled_from(["http", "https", "ws", "wss", "ws+chatgpt", "wss+chatgpt", "rest+http"]),
                        HOSTS, st.integers(1, 65535), PATHS)
WORDS = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12)


@given(URL_TARGETS)
def test_url_targets_round_trip(text: str) -> None:
    target = Target.parse(text)
    assert Target.parse(str(target)) == target


@given(st.lists(WORDS, min_size=1, max_size=4))
def test_stdio_targets_round_trip(argv: list[str]) -> None:
    target = Target.stdio(shlex.join(argv))
    assert target.transport is Transport.STDIO and target.command == tuple(argv)
    assert Target.parse(str(target)) == target


@pytest.mark.parametrize("text", ["ftp://x/mcp", "http:///mcp", "http://host:notaport/mcp", "stdio:", "nothing"])
def test_bad_targets_are_usage_errors(text: str) -> None:
    with pytest.raises(ClientError) as bad:
        Target.parse(text)
    assert bad.value.code is ClientErrorCode.USAGE


class MemoryWire:
    with_version = True
    require_jsonrpc = True

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


MESSAGES = JSON_VALUES | st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "id": st.integers(0, 4) | st.text(max_size=2)},
    optional={"result": JSON_VALUES, "error": JSON_VALUES, "method": st.text(max_size=12), "params": JSON_VALUES})


@given(st.lists(MESSAGES, max_size=12))
def test_any_server_messages_only_ever_settle_their_own_request(messages: list[Any]) -> None:
    async def scenario() -> None:
        wire = MemoryWire()
        dispatcher = Dispatcher(wire)
        calls = [asyncio.ensure_future(dispatcher.request("ping", {}, timeout=None)) for _ in range(3)]
        await asyncio.sleep(0)
        ids = [message["id"] for message in wire.sent]
        for message in messages:
            dispatcher.receive(message)  # never raises, whatever the server sends
        await asyncio.sleep(0)
        for request_id, call in zip(ids, calls):
            answers = [m for m in messages if isinstance(jsonrpc.classify(m), jsonrpc.Response)
                       and jsonrpc.classify(m).id == request_id]
            invalid = [m for m in messages if isinstance(m, dict) and m.get("id") == request_id
                       and isinstance(jsonrpc.classify(m), jsonrpc.Invalid)]
            assert call.done() == bool(answers or invalid)
            if call.done() and call.exception() is not None:
                assert isinstance(call.exception(), ClientError)
        await asyncio.sleep(0)  # answers to server requests are sent by background tasks
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)
        await dispatcher.drain()

    asyncio.run(scenario())
