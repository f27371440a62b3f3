"""A full server shares its held-open places fairly, and lets idle ones go (ADR 1214), against real servers.

ADR 1161 capped each client's WebSockets and long-lived streams, but eight clients at their caps still
filled the server's 1,024 and every newcomer got 503 until they let go. Now a newcomer below its fair
share is admitted by closing the largest holder's oldest idle place (a socket closed with 1013 and a
reason, an SSE response ended so the client resumes it), never one with a call in flight; places idle for
`stream_idle_timeout_s` are closed; and IPv6 clients are counted by /64. The servers here are the HTTP app
with the WebSocket endpoint mounted, under uvicorn in a thread, with caps of 4 places in all and 3 per
client, so the clients (told apart by loopback address, as without authentication) fill it in a moment.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
from typing import Any, AsyncIterator, Iterator

import httpx
import pytest
import structlog.testing
from hypothesis import given, settings, strategies as st
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from hexmcp.adapters.held_open import HeldOpen
from hexmcp.adapters.http import HttpConfig, create_app
from hexmcp.adapters.http.address_group import held_key
from hexmcp.adapters.http.runner import uvicorn_config
from hexmcp.adapters.ws import WsConfig, WsEndpoint, WsUvicornServer
from tests.adapters.test_http_held_open import _listen, _session
from tests.fixtures.ws_live import ws_demo_server

from ..support.net import free_port, uvicorn_in_thread

pytestmark = pytest.mark.timeout(60)

TOTAL, PER_CLIENT = 4, 3
HANDSHAKE = "2025-11-25"


class Served:
    def __init__(self, port: int, endpoint: WsEndpoint, app: Any) -> None:
        self.port, self.endpoint, self.app = port, endpoint, app
        self.base = f"http://127.0.0.1:{port}"
        self.ws = f"ws://127.0.0.1:{port}/ws"


@contextlib.contextmanager
def _serve(**config: Any) -> Iterator[Served]:
    server = ws_demo_server()
    http_config = HttpConfig(port=free_port(), max_streams=TOTAL, max_streams_per_client=PER_CLIENT, **config)
    endpoint = WsEndpoint(server, WsConfig.from_http(http_config))
    app = create_app(server, http_config, extra_routes={endpoint.config.path: endpoint})
    uvicorn_server = WsUvicornServer(uvicorn_config(app, http_config, log_level="error",
                                                    **endpoint.config.uvicorn_options()), [endpoint])
    with uvicorn_in_thread(uvicorn_server, what="HTTP and WebSocket server", stop_timeout_s=20):
        yield Served(http_config.port, endpoint, app)


@pytest.fixture
def full_share():
    with _serve(stream_idle_timeout_s=None) as served:
        yield served


@pytest.fixture
def short_idle():
    with _serve(stream_idle_timeout_s=0.6) as served:
        yield served


async def _socket(served: Served, address: str) -> Any:
    """An open socket from `address`, or the HTTP status its handshake was refused with."""
    try:
        return await connect(served.ws, local_addr=(address, 0), open_timeout=10)
    except InvalidStatus as refused:
        return refused.response.status_code


async def _closed(ws: Any, within: float = 5.0) -> tuple[int | None, str] | None:
    """(code, reason) the server closed `ws` with, or None if it stays open for `within` seconds."""
    try:
        async with asyncio.timeout(within):
            while True:
                await ws.recv()
    except ConnectionClosed as closed:
        return (closed.rcvd.code, closed.rcvd.reason) if closed.rcvd else (None, "")
    except TimeoutError:
        return None


async def _ask(ws: Any, request_id: int, method: str, params: dict[str, Any] | None = None) -> None:
    await ws.send(json.dumps({"id": request_id, "method": method, "params": params or {}}))


async def _answer(ws: Any, request_id: int, within: float = 10.0) -> dict[str, Any]:
    async with asyncio.timeout(within):
        while True:
            message = json.loads(await ws.recv())
            if message.get("id") == request_id:
                return message


async def _initialized(ws: Any) -> Any:
    await _ask(ws, 1, "initialize", {"protocolVersion": HANDSHAKE, "capabilities": {},
                                     "clientInfo": {"name": "t", "version": "1"}})
    await _answer(ws, 1)
    return ws


async def _in_flight(served: Served, calls: int, within: float = 5.0) -> None:
    """Wait until `calls` of the server's sockets have a call in flight (none idle by `Holder.idle`): a call
    the client sent reaches the server a moment later, and until then its socket is idle and may be closed."""
    async with asyncio.timeout(within):
        while sum(not place.idle() for place in served.endpoint.held._client_of) < calls:
            await asyncio.sleep(0.01)


def test_a_newcomer_to_a_full_server_closes_the_largest_holders_oldest_idle_socket(full_share) -> None:
    """A holds 3 sockets (the oldest busy with a call), B 1: the server is full. C (fair share 4 // 3 = 1)
    gets in: A's oldest *idle* socket is closed with 1013 and why, its busy one finishes its call. A itself,
    above its fair share, is still refused."""

    async def scenario() -> dict[str, Any]:
        busy, idle, newest = [await _initialized(await _socket(full_share, "127.0.0.2")) for _ in range(3)]
        idle_session = idle.response.headers["mcp-session-id"]
        other = await _socket(full_share, "127.0.0.3")
        await _ask(busy, 7, "tools/call", {"name": "slow", "arguments": {"seconds": 1.5, "steps": 1}})
        await _in_flight(full_share, 1)
        newcomer = await _socket(full_share, "127.0.0.4")
        closed = await _closed(idle)
        await _ask(newcomer, 1, "ping")
        served = await _answer(newcomer, 1)
        call = await _answer(busy, 7)
        again = await _socket(full_share, "127.0.0.2")
        outcome = {"closed": closed, "newcomer served": "result" in served, "busy call": "result" in call,
                   "A again": again, "newest still open": await _closed(newest, within=0.2) is None,
                   "evicted": full_share.endpoint.held.evicted, "idle session": idle_session}
        for ws in (busy, newest, other, newcomer):
            await ws.close()
        return outcome

    with structlog.testing.capture_logs() as logs:
        outcome = asyncio.run(scenario())
    code, reason = outcome.pop("closed")
    assert code == 1013 and "fair share of 1" in reason
    evictions = [entry for entry in logs if entry["event"] == "held-open place closed for a newcomer"]
    assert [(e["sessionId"], e["client"], e["newcomer"], e["held"], e["fairShare"]) for e in evictions] == [
        (outcome.pop("idle session"), "address:127.0.0.2", "address:127.0.0.4", 3, 1)]
    assert outcome == {"newcomer served": True, "busy call": True, "A again": 503, "newest still open": True,
                       "evicted": 1}


def test_no_socket_is_closed_while_every_place_of_the_largest_holders_has_a_call_in_flight(full_share) -> None:
    async def scenario() -> tuple[Any, list[bool]]:
        mine = [await _initialized(await _socket(full_share, "127.0.0.2")) for _ in range(3)]
        other = await _socket(full_share, "127.0.0.3")
        for index, ws in enumerate(mine):
            await _ask(ws, 10 + index, "tools/call", {"name": "slow", "arguments": {"seconds": 1.0, "steps": 1}})
        await _in_flight(full_share, 3)
        refused = await _socket(full_share, "127.0.0.4")
        answered = ["result" in await _answer(ws, 10 + index) for index, ws in enumerate(mine)]
        for ws in (*mine, other):
            await ws.close()
        return refused, answered

    assert asyncio.run(scenario()) == (503, [True, True, True])


@contextlib.asynccontextmanager
async def _client(served: Served, address: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=served.base, timeout=10,
                                 transport=httpx.AsyncHTTPTransport(local_address=address)) as client:
        yield client


async def _ends(stream: httpx.Response | AsyncIterator[str], within: float = 5.0) -> list[str] | None:
    """The lines left on a stream (a response, or its lines being read) if the server ends it within `within`
    seconds, else None."""
    lines: list[str] = []
    try:
        async with asyncio.timeout(within):
            async for line in stream.aiter_lines() if isinstance(stream, httpx.Response) else stream:
                lines.append(line)
        return lines
    except TimeoutError:
        return None


async def _released(served: Served, below: int, within: float = 5.0) -> None:
    """Wait until the server holds fewer than `below` streams: a client's close reaches it a moment later."""
    async with asyncio.timeout(within):
        while len(served.app.mcp.streams) >= below:
            await asyncio.sleep(0.01)


def test_a_newcomers_stream_ends_the_largest_holders_oldest_get_stream_which_resumes_later(full_share) -> None:
    async def scenario() -> dict[str, Any]:
        async with _client(full_share, "127.0.0.2") as mine, _client(full_share, "127.0.0.3") as theirs, \
                _client(full_share, "127.0.0.4") as newcomer, contextlib.AsyncExitStack() as held:
            sessions = [await _session(mine) for _ in range(3)]
            streams = [await held.enter_async_context(mine.stream("GET", "/mcp", headers=h)) for h in sessions]
            oldest = streams[0].aiter_lines()
            first_event = (await anext(oldest)).removeprefix("id:").strip()  # the priming event
            await held.enter_async_context(_listen(theirs))
            async with _listen(newcomer) as admitted:
                ended = await _ends(oldest)
                resume = {**sessions[0], "last-event-id": first_event}
                async with mine.stream("GET", "/mcp", headers=resume) as refused:
                    while_full = refused.status_code
            await _released(full_share, below=TOTAL)  # the server sees the newcomer's disconnect when it reads it
            async with mine.stream("GET", "/mcp", headers=resume) as resumed:
                later = resumed.status_code
            return {"newcomer": admitted.status_code, "oldest ended": ended is not None,
                    "resume while full": while_full, "resume later": later,
                    "others open": [await _ends(s, within=0.2) is None for s in streams[1:]]}

    assert asyncio.run(scenario()) == {"newcomer": 200, "oldest ended": True, "resume while full": 503,
                                       "resume later": 200, "others open": [True, True]}


def test_idle_sockets_and_streams_are_closed_after_the_timeout_busy_ones_are_not(short_idle) -> None:
    async def scenario() -> dict[str, Any]:
        idle = await _initialized(await _socket(short_idle, "127.0.0.2"))
        busy = await _initialized(await _socket(short_idle, "127.0.0.2"))
        await _ask(busy, 5, "tools/call", {"name": "slow", "arguments": {"seconds": 1.6, "steps": 1}})
        async with _client(short_idle, "127.0.0.3") as client, contextlib.AsyncExitStack() as held:
            headers = await _session(client)
            get = await held.enter_async_context(client.stream("GET", "/mcp", headers=headers))
            lines = get.aiter_lines()
            event_id = (await anext(lines)).removeprefix("id:").strip()
            listen = await held.enter_async_context(_listen(client))
            socket_closed = await _closed(idle)
            get_ended, listen_left = await _ends(lines), await _ends(listen)
            call = await _answer(busy, 5)
            async with client.stream("GET", "/mcp", headers={**headers, "last-event-id": event_id}) as resumed:
                resumed_status = resumed.status_code
        await busy.close()
        return {"socket": socket_closed, "busy call": "result" in call, "get ended": get_ended is not None,
                "listen answered": any('"id":"L"' in line.replace(" ", "") for line in listen_left or []),
                "resumed": resumed_status, "expired": (short_idle.endpoint.held.expired >= 1)}

    outcome = asyncio.run(scenario())
    assert outcome.pop("socket") == (1000, "idle for 0.6 s")
    assert outcome == {"busy call": True, "get ended": True, "listen answered": True, "resumed": 200,
                       "expired": True}


def test_a_socket_whose_client_only_sends_notifications_is_not_idle(short_idle) -> None:
    """Notifications get no answer, so a socket judged by what the server sends looked idle while its client
    kept telling the server things; the client's own messages count as activity too."""

    async def scenario() -> dict[str, Any]:
        talking = await _initialized(await _socket(short_idle, "127.0.0.2"))
        silent = await _initialized(await _socket(short_idle, "127.0.0.3"))
        for _ in range(12):  # 1.8 s: three times the idle timeout
            await talking.send(json.dumps({"method": "notifications/roots/list_changed"}))
            await asyncio.sleep(0.15)
        outcome = {"silent": await _closed(silent, within=0.1), "talking": await _closed(talking, within=0.1)}
        await talking.close()
        return outcome

    assert asyncio.run(scenario()) == {"silent": (1000, "idle for 0.6 s"), "talking": None}


def test_a_full_session_table_evicts_the_largest_holders_session_not_the_one_idle_longest() -> None:
    """B's one session is the least recently used of all; A holds 3. A newcomer's session evicts A's least
    recently used one (before: B's, whoever held the most)."""

    async def scenario(served: Served) -> dict[str, int]:
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        async with _client(served, "127.0.0.2") as mine, _client(served, "127.0.0.3") as theirs, \
                _client(served, "127.0.0.4") as newcomer:
            b = await _session(theirs)
            a = [await _session(mine) for _ in range(3)]
            for headers in a:  # A's sessions are all used after B's
                await mine.post("/mcp", headers=headers, json=ping)
            fresh = await _session(newcomer)
            status = {"B": (await theirs.post("/mcp", headers=b, json=ping)).status_code,
                      "newcomer": (await newcomer.post("/mcp", headers=fresh, json=ping)).status_code}
            for index, headers in enumerate(a):
                status[f"A{index}"] = (await mine.post("/mcp", headers=headers, json=ping)).status_code
            return status

    with _serve(max_sessions=4, max_sessions_per_client=3) as served:
        assert asyncio.run(scenario(served)) == {"B": 200, "newcomer": 200, "A0": 404, "A1": 200, "A2": 200}


# --- the ledger and the key, without a server --------------------------------------------------------------


class _Held:
    def __init__(self, busy: bool) -> None:
        self.session_id = "s"
        self.busy = busy
        self.let_go_as: bool | None = None

    def idle(self) -> bool:
        return not self.busy

    def activity(self) -> int:
        return 0

    def let_go(self, reason: str, *, idle: bool) -> None:
        self.let_go_as = idle


@settings(max_examples=200, deadline=None)
@given(per_client=st.integers(1, 4), total=st.integers(1, 8),
       steps=st.lists(st.tuples(st.booleans(), st.integers(0, 4), st.booleans()), max_size=60))
def test_fair_share_never_passes_a_cap_never_closes_a_busy_place_and_only_takes_from_above_the_share(
        per_client: int, total: int, steps: list[tuple[bool, int, bool]]) -> None:
    ledger = HeldOpen(what="things", per_client=per_client, total=total)
    held: dict[int, list[_Held]] = {}
    for take, client, busy in steps:
        if take:
            place = _Held(busy)
            before = {c: len(p) for c, p in held.items() if p}
            fair = ledger.fair_share(client)
            refused = ledger.take(client, place)
            closed = [(c, p) for c, places in held.items() for p in places if p.let_go_as is not None]
            if refused is None:
                held.setdefault(client, []).append(place)
            if closed:
                assert len(closed) == 1 and refused is None
                victim, victim_place = closed[0]
                assert not victim_place.busy and victim_place.let_go_as is False
                assert before[victim] > fair > before.get(client, 0)
                assert victim_place is next(p for p in held[victim] if not p.busy)  # its oldest idle one
                held[victim].remove(victim_place)
            elif refused is None:
                assert sum(before.values()) < total
        elif held.get(client):
            ledger.give(client, held[client].pop(0))
        assert len(ledger) == sum(len(p) for p in held.values()) <= total
        assert all(ledger.held_by(c) == len(p) <= per_client for c, p in held.items())


def test_an_ipv6_client_is_counted_by_its_64_other_keys_stay_as_they_are() -> None:
    assert held_key("address:2001:db8:1:2:aaaa::1") == held_key("address:2001:db8:1:2:ffff::9") \
        == "address:2001:db8:1:2::/64"
    assert held_key("address:2001:db8:1:3::1") != held_key("address:2001:db8:1:2::1")
    assert held_key("address:::ffff:192.0.2.7") == "address:192.0.2.7"
    for same in ("address:192.0.2.7", "oauth:sub:with:colons", "token:ci", "address:unknown", "address:not:an:ip"):
        assert held_key(same) == same


@given(st.integers(0, 2**128 - 1), st.integers(0, 2**64 - 1))
def test_two_ipv6_addresses_share_a_key_exactly_when_they_share_a_64(address: int, other_low: int) -> None:
    mine = ipaddress.IPv6Address(address)
    if mine.ipv4_mapped is not None:
        return
    neighbour = ipaddress.IPv6Address((address >> 64 << 64) | other_low)
    assert held_key(f"address:{mine}") == held_key(f"address:{neighbour}")
    stranger = ipaddress.IPv6Address(address ^ (1 << 64))
    if stranger.ipv4_mapped is None:
        assert held_key(f"address:{mine}") != held_key(f"address:{stranger}")
