"""Invariants of the client's sans-IO parts: targets round-trip, any server message is survivable, SSE
streams decode the same however they are split.

The dispatcher runs here over an in-memory wire (it records what it is asked to send), since what is
checked is the dispatcher's reading of arbitrary input, not a transport.
"""

from __future__ import annotations

import asyncio
import shlex
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.wire import jsonrpc
from hexmcp.client import ClientError, ClientErrorCode, Target, Transport
from hexmcp.client.dispatcher import Dispatcher
from hexmcp.wire import sse_events as sse
from hexmcp.client.transports.aio import env_proxy

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


class StreamingMemoryWire(MemoryWire):
    """A wire that writes at once (`write_now`, as stdio does) unless told it is full for that request."""

    def __init__(self, full: list[bool]) -> None:
        super().__init__()
        self.full = list(full)

    def write_now(self, message: dict[str, Any]) -> bool:
        if self.full and self.full.pop(0):
            return False  # over the high-water mark: the dispatcher must await send() instead
        self.sent.append(message)
        return True


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


@pytest.mark.anyio
async def test_a_request_returns_after_its_async_progress_callbacks() -> None:
    """Progress and the answer in one read (as one network chunk brings them): the relay still runs first."""
    wire = MemoryWire()
    dispatcher = Dispatcher(wire)
    relayed: list[float] = []

    async def relay(progress: float, total: float | None, message: str | None) -> None:
        for _ in range(3):
            await asyncio.sleep(0)  # a downstream send that takes a few loop turns
        relayed.append(progress)

    call = asyncio.ensure_future(dispatcher.request("tools/call", {"name": "slow"}, timeout=None, progress=relay))
    await asyncio.sleep(0)
    [request] = wire.sent
    token = request["params"]["_meta"]["progressToken"]
    for step in (1, 2):
        dispatcher.receive(jsonrpc.encode_notification("notifications/progress", {"progressToken": token, "progress": step}))
    dispatcher.receive(jsonrpc.encode_result(request["id"], {"content": []}))
    assert await call == {"content": []}
    assert relayed == [1, 2]


# Timeouts in tens of milliseconds, None (wait forever), and whether the server answers the request at once.
TIMED_REQUESTS = st.lists(st.tuples(st.none() | st.sampled_from([0.01, 0.02, 0.04, 0.08]), st.booleans()),
                          min_size=1, max_size=6)
# For a streaming wire, per request: whether it finds the wire full (awaited send, in a cancellation scope).
WIRES = st.none() | st.lists(st.booleans(), max_size=6)


@settings(max_examples=40, deadline=None)
@given(TIMED_REQUESTS, WIRES)
def test_the_shared_deadline_timer_times_out_exactly_the_unanswered_requests_that_had_a_timeout(
        requests: list[tuple[float | None, bool]], full: list[bool] | None) -> None:
    """Deadlines share one timer (wire/deadlines.py): registered in any order, each still fires, and a
    request answered in time, or with no timeout, is never touched by another's deadline; the same
    whether a request waits in a cancellation scope (a sending wire, a full one) or on its future alone
    (written at once: ADR 0811), and with both kinds mixed on one timer."""
    async def scenario() -> None:
        wire = MemoryWire() if full is None else StreamingMemoryWire(full)
        dispatcher = Dispatcher(wire)
        calls = [asyncio.ensure_future(dispatcher.request("tools/call", {}, timeout=timeout)) for timeout, _ in requests]
        await asyncio.sleep(0)
        ids = [message["id"] for message in wire.sent]
        for request_id, (_, answered) in zip(ids, requests):
            if answered:
                dispatcher.receive(jsonrpc.encode_result(request_id, {"content": []}))
        await asyncio.wait(calls, timeout=0.5)
        for call, (timeout, answered) in zip(calls, requests):
            if answered:
                assert call.result() == {"content": []}
            elif timeout is None:
                assert not call.done()
            else:
                assert isinstance(call.exception(), ClientError) and call.exception().code is ClientErrorCode.TIMEOUT
        await dispatcher.drain()
        cancelled = {m["params"]["requestId"] for m in wire.sent if m.get("method") == "notifications/cancelled"}
        assert cancelled == {i for i, (timeout, answered) in zip(ids, requests) if timeout is not None and not answered}
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)

    asyncio.run(scenario())


SSE_IDS = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=8)
SSE_DATA = st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20), min_size=1, max_size=3)


@given(st.lists(st.tuples(SSE_IDS, SSE_DATA), max_size=5), st.data())
def test_sse_events_decode_the_same_however_the_stream_is_split(events: list[tuple[str, list[str]]], data) -> None:
    """Also the fence around httpx-sse's private decoder: a release that moves or changes it fails here."""
    stream = "".join(("id: " + event_id + "\n" if event_id else "") + "".join(f"data: {line}\n" for line in lines) + "\n"
                     for event_id, lines in events).encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)])]

    async def chunked() -> Any:
        for chunk in chunks:
            yield chunk

    async def decode() -> list[tuple[str, str]]:
        return [(event.id, event.data) async for event in sse.events(chunked())]

    expected, last_id = [], ""
    for event_id, lines in events:
        last_id = event_id or last_id  # an event without an id keeps the last one (the resumption point)
        expected.append((last_id, "\n".join(lines)))
    assert asyncio.run(decode()) == expected


@pytest.mark.parametrize(("url", "environment", "proxy"), [
    ("http://example.com/mcp", {"HTTP_PROXY": "http://proxy:3128"}, "http://proxy:3128"),
    ("http://example.com/mcp", {"HTTP_PROXY": "http://proxy:3128", "NO_PROXY": "example.com"}, None),
    ("https://example.com/mcp", {"HTTP_PROXY": "http://proxy:3128"}, None),
    ("https://example.com/mcp", {"HTTPS_PROXY": "http://proxy:3128"}, "http://proxy:3128"),
    ("http://127.0.0.1:8090/mcp", {}, None),
])
def test_the_environment_s_proxy_is_honoured(monkeypatch, url: str, environment: dict[str, str],
                                             proxy: str | None) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert env_proxy(url) == proxy
