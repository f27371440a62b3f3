"""What one client may hold open for long, against a real `hexmcp serve`: WebSockets, GET streams and
subscriptions/listen streams are capped per client (`--max-streams-per-client`), a resumed stream keeps
one connection, and a request naming two Hosts or two Origins is refused.

Found by bench/security_probes.py: a client on four loopback addresses held all 1,024 WebSockets (the
next client got 503), and one session resumed its GET stream 200 times, each connection held open for
the stream's life against the server's 1,024 streams. Clients here are told apart by their source
address (127.0.0.2, 127.0.0.3: no authentication, so the address is the identity).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from bench.hostile_probes import raw_exchange, status_of
from hexmcp.adapters.held_open import HeldOpen
from tests.adapters.http_wire import MODERN, modern_params
from tests.support.serve_process import LIGHT, serve_process

pytestmark = pytest.mark.timeout(120)

CAP = 3
ACCEPT = "application/json, text/event-stream"
HANDSHAKE = "2025-11-25"


@pytest.fixture(scope="module")
def served():
    with serve_process(*LIGHT, "--max-streams-per-client", str(CAP)) as process:
        yield process


def _client(process: Any, address: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=process.base, timeout=10,
                             transport=httpx.AsyncHTTPTransport(local_address=address))


async def _session(client: httpx.AsyncClient) -> dict[str, str]:
    opened = await client.post("/mcp", headers={"accept": ACCEPT}, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    headers = {"accept": ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"],
               "mcp-protocol-version": HANDSHAKE}
    await client.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers


@contextlib.asynccontextmanager
async def _get_stream(client: httpx.AsyncClient, headers: dict[str, str]) -> AsyncIterator[httpx.Response]:
    async with client.stream("GET", "/mcp", headers=headers) as response:
        yield response


@contextlib.asynccontextmanager
async def _listen(client: httpx.AsyncClient) -> AsyncIterator[httpx.Response]:
    message = {"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
               "params": modern_params({"notifications": {"toolsListChanged": True}})}
    headers = {"accept": ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": "subscriptions/listen"}
    async with client.stream("POST", "/mcp", json=message, headers=headers) as response:
        yield response


def test_one_client_cannot_take_every_websocket(served) -> None:
    url = f"ws://127.0.0.1:{served.port}/ws"

    async def status(address: str) -> int:
        try:
            async with connect(url, local_addr=(address, 0), open_timeout=10):
                return 101
        except InvalidStatus as refused:
            return refused.response.status_code

    async def admitted_once_let_go(address: str, within: float = 10.0) -> int:
        """The server lets go of a closed socket's place when it reads the close, a moment after the client
        sent it: until then a new socket is refused, so ask again until admitted or `within` runs out."""
        deadline = asyncio.get_running_loop().time() + within
        while (answer := await status(address)) != 101 and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        return answer

    async def scenario() -> tuple[int, int, int]:
        held = [await connect(url, local_addr=("127.0.0.2", 0), open_timeout=10) for _ in range(CAP)]
        try:
            over, other = await status("127.0.0.2"), await status("127.0.0.3")
            await held.pop().close()
            again = await admitted_once_let_go("127.0.0.2")
        finally:
            for ws in held:
                await ws.close()
        return over, other, again

    assert asyncio.run(scenario()) == (503, 101, 101)


def test_one_clients_streams_are_capped_across_both_eras(served) -> None:
    async def scenario() -> tuple[int, int, int, int]:
        async with _client(served, "127.0.0.2") as mine, _client(served, "127.0.0.3") as theirs:
            async with contextlib.AsyncExitStack() as held:
                for _ in range(CAP - 1):
                    assert (await held.enter_async_context(_get_stream(mine, await _session(mine)))).status_code == 200
                assert (await held.enter_async_context(_listen(mine))).status_code == 200
                async with _get_stream(mine, await _session(mine)) as get_over, _listen(mine) as listen_over:
                    refused = (get_over.status_code, listen_over.status_code)
                async with _get_stream(theirs, await _session(theirs)) as other, _listen(theirs) as other_listen:
                    return (*refused, other.status_code, other_listen.status_code)

    assert asyncio.run(scenario()) == (503, 503, 200, 200)


def test_resuming_a_stream_again_and_again_keeps_one_connection(served) -> None:
    """Each resumption takes the stream over: the connection attached before it ends, so a client resuming
    more often than its cap allows streams is still served, and holds one connection at a time."""

    async def ends(lines: AsyncIterator[str]) -> bool:
        try:
            async with asyncio.timeout(5):
                async for _ in lines:
                    pass
            return True
        except TimeoutError:
            return False

    async def scenario() -> list[tuple[int, bool]]:
        async with _client(served, "127.0.0.2") as client, contextlib.AsyncExitStack() as held:
            headers = await _session(client)
            first = await held.enter_async_context(_get_stream(client, headers))
            previous = first.aiter_lines()
            event_id = (await anext(previous)).removeprefix("id:").strip()  # the priming event's id
            seen = []
            for _ in range(CAP * 3):
                resumed = await held.enter_async_context(_get_stream(client, {**headers, "last-event-id": event_id}))
                seen.append((resumed.status_code, await ends(previous)))
                previous = resumed.aiter_lines()
            return seen

    assert asyncio.run(scenario()) == [(200, True)] * (CAP * 3)


def _raw_status(port: int, head: bytes) -> int | None:
    return status_of(raw_exchange(port, head))


NAMES = st.sampled_from(["127.0.0.1", "localhost", "evil.example", "[::1]", "127.0.0.1.nip.io"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=NAMES, second=NAMES, upgrade=st.booleans())
def test_two_host_headers_are_never_served(served, first: str, second: str, upgrade: bool) -> None:
    port = served.port
    extra = (b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
             b"Sec-WebSocket-Version: 13\r\n") if upgrade else b"Content-Type: application/json\r\nContent-Length: 2\r\n"
    request = (b"GET /ws" if upgrade else b"POST /mcp/ping") + b" HTTP/1.1\r\n"
    head = request + f"Host: {first}:{port}\r\nHost: {second}:{port}\r\n".encode() + extra + b"\r\n"
    assert _raw_status(port, head + (b"" if upgrade else b"{}")) == 400


def test_two_origin_headers_are_refused_whichever_comes_first(served) -> None:
    own, evil = f"http://127.0.0.1:{served.port}", "http://evil.example"
    for origins in ((own, evil), (evil, own)):
        head = (f"POST /mcp/ping HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nOrigin: {origins[0]}\r\n"
                f"Origin: {origins[1]}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}").encode()
        assert _raw_status(served.port, head) == 403
    one = (f"POST /mcp/ping HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nOrigin: {own}\r\n"
           "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}").encode()
    assert _raw_status(served.port, one) == 200


# --- the ledger itself -----------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(per_client=st.integers(1, 4), total=st.integers(1, 8),
       steps=st.lists(st.tuples(st.booleans(), st.integers(0, 3)), max_size=60))
def test_the_ledger_never_passes_a_cap_and_forgets_clients_that_hold_nothing(per_client: int, total: int,
                                                                             steps: list[tuple[bool, int]]) -> None:
    ledger = HeldOpen(what="things", per_client=per_client, total=total)
    held: dict[int, int] = {}
    for take, client in steps:
        if take:
            refused = ledger.take(client)
            expected_ok = held.get(client, 0) < per_client and sum(held.values()) < total
            assert (refused is None) == expected_ok
            if refused is None:
                held[client] = held.get(client, 0) + 1
        elif held.get(client):
            ledger.give(client)
            held[client] -= 1
        assert len(ledger) == sum(held.values()) <= total
        assert all(ledger.held_by(c) == n <= per_client for c, n in held.items())
    for client, count in held.items():
        for _ in range(count):
            ledger.give(client)
    assert len(ledger) == 0 and ledger._held == {}
