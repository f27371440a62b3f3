"""What a client can pin in the server's memory through SSE resumption and sessions (issue 30).

Events kept for `Last-Event-ID` are counted in bytes per session, per client and in all (`replay.py`), so
POSTs whose answers are megabytes each no longer leave ~100 MB behind; one client's sessions are capped,
and one client opening session after session evicts only its own. Each test also shows what is still
served: large answers arrive whole (live), small events stay resumable, other clients keep their sessions.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from typing import Any

import httpx
import psutil
import pytest

from hexmcp.adapters.http.replay import EVENT_OVERHEAD, ReplayLedger
from hexmcp.core import versions
from tests.adapters.http_live import live_server
from tests.adapters.http_wire import Wire, parse_sse
from tests.fixtures.demo_server import build_demo_server
from tests.support.serve_process import LIGHT, serve_process

pytestmark = pytest.mark.timeout(120)

SSE_ONLY = "text/event-stream"


def _sse_post(wire: Wire, message: dict[str, Any]) -> httpx.Response:
    return wire.http.post(wire.path, content=json.dumps(message), headers=wire.headers({"accept": SSE_ONLY}))


def _echo(wire: Wire, request_id: int, text: str) -> httpx.Response:
    return _sse_post(wire, {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                            "params": {"name": "echo", "arguments": {"text": text}}})


def _event_ids(response: httpx.Response) -> list[str]:
    return [event["id"] for event in parse_sse(response.text) if "id" in event]


def _replayed(wire: Wire, last_event_id: str) -> list[dict[str, Any]]:
    """The messages a resumer gets after `last_event_id` (the streams here are finished: the GET ends)."""
    response = wire.http.get(wire.path, headers=wire.headers({"accept": SSE_ONLY, "last-event-id": last_event_id}))
    assert response.status_code == 200, response.text
    return [json.loads(event["data"]) for event in parse_sse(response.text) if event.get("data")]


# --- against a real `hexmcp serve`: the hostile burst, with the server's RSS ---------------------------------


BURST = 14  # answers of 3.9 MB: with the honest stream, under the 16 streams a session keeps
ANSWER_CHARS = 3_900_000
UNCAPPED = ("--replay-bytes-per-session", str(2**30), "--replay-bytes-per-client", str(2**30))


def _burst(*flags: str) -> tuple[int, list[dict[str, Any]]]:
    """RSS grown over a burst of huge answers on one session of `hexmcp serve FLAGS`, and what a resumer
    then gets after the small event sent before the burst."""
    with serve_process(*LIGHT, *flags) as served:
        process = psutil.Process(served.process.pid)
        wire = Wire(served.base)
        wire.http.timeout = httpx.Timeout(60)
        wire.initialize()
        honest_ids = _event_ids(_sse_post(wire, {"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        time.sleep(0.5)
        before = process.memory_info().rss
        # A request id comes back whole in its answer (errors quote at most 1 KiB of the input, core/echo.py).
        for n in range(BURST):
            request_id = f"{n:02d}" + "x" * ANSWER_CHARS
            response = _sse_post(wire, {"jsonrpc": "2.0", "id": request_id, "method": "ping"})
            assert response.status_code == 200
            [answer] = [json.loads(e["data"]) for e in parse_sse(response.text) if e.get("data")]
            assert answer == {"jsonrpc": "2.0", "id": request_id, "result": {}}  # whole, live
        time.sleep(0.5)
        grown = process.memory_info().rss - before
        replayed = _replayed(wire, honest_ids[0])
        wire.close()
        return grown, replayed


def test_huge_answers_are_delivered_live_but_not_kept(capsys: pytest.CaptureFixture[str]) -> None:
    """Before the byte caps: +101 MB of RSS that stayed (256 events per stream, 16 streams per session). The
    same burst against caps raised out of reach shows what they free: the answers' bytes, kept otherwise.
    What RSS keeps either way beyond that is the allocator's, not the server's."""
    capped, replayed = _burst()
    uncapped, _ = _burst(*UNCAPPED)
    with capsys.disabled():
        print(f"\nRSS grown over {BURST} answers of {ANSWER_CHARS / 1e6:.1f} MB: {capped / 2**20:.1f} MiB with the "
              f"caps, {uncapped / 2**20:.1f} MiB with them out of reach")
    assert uncapped - capped > 0.7 * BURST * ANSWER_CHARS  # what the caps keep from staying
    # The honest event from before the burst is still resumable: nothing small was pushed out.
    assert replayed == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


# --- in-process server with small caps: eviction order and the per-client caps ------------------------------


@pytest.fixture(scope="module")
def live():
    with live_server(build_demo_server(), replay_bytes_per_session=6_000, replay_bytes_per_client=9_000,
                     replay_bytes_total=64 * 1024, max_sessions_per_client=3) as server:
        yield server


_ADDRESSES: dict[str, str] = {}


def _address(name: str) -> str:
    """Each named client's own loopback address: with no authentication configured a client is its address
    (a bearer value would not name it: ADR 1101)."""
    return _ADDRESSES.setdefault(name, f"127.0.0.{20 + len(_ADDRESSES)}")


def _wire_as(live, name: str) -> Wire:
    wire = Wire(live.base)
    wire.http.close()
    wire.http = httpx.Client(base_url=live.base, timeout=10, transport=httpx.HTTPTransport(local_address=_address(name)))
    return wire


def _client(live, name: str) -> Wire:
    """A client of its own identity, with a session."""
    wire = _wire_as(live, name)
    wire.initialize()
    return wire


def test_a_session_keeps_its_newest_events_within_its_byte_cap(live) -> None:
    wire = _client(live, "one-session")
    firsts = [_event_ids(_echo(wire, n, "a" * 2_000))[0] for n in range(1, 5)]  # 4 × ~2.1 KB > 6,000
    assert _replayed(wire, firsts[0]) == []  # the oldest answers were forgotten...
    [kept] = _replayed(wire, firsts[3])  # ...the newest is still there to resume
    assert kept["id"] == 4 and kept["result"]["content"][0]["text"] == "a" * 2_000
    ledger = live.app.mcp.sessions.replay
    assert 0 < ledger.client_used(f"address:{_address('one-session')}") <= 6_000
    wire.close()


def test_an_event_larger_than_the_cap_is_sent_but_not_kept(live) -> None:
    wire = _client(live, "large-event")
    response = _echo(wire, 1, "b" * 7_000)
    assert json.loads(parse_sse(response.text)[-1]["data"])["result"]["content"][0]["text"] == "b" * 7_000
    assert _replayed(wire, _event_ids(response)[0]) == []
    small = _echo(wire, 2, "small")
    assert _replayed(wire, _event_ids(small)[0])[0]["id"] == 2
    wire.close()


def test_one_clients_sessions_share_a_byte_cap(live) -> None:
    first = _client(live, "two-sessions")
    second = _client(live, "two-sessions")
    early = _event_ids(_echo(first, 1, "c" * 4_000))[0]
    later = [_event_ids(_echo(second, n, "d" * 2_500))[0] for n in (2, 3)]  # 4 KB + 2 × 2.6 KB > 9,000
    assert _replayed(first, early) == []  # the client's oldest event went, though its own session had room
    assert [m["id"] for m in _replayed(second, later[0])] == [2]
    first.close()
    second.close()


def test_a_client_at_its_session_cap_replaces_its_own_oldest_session(live) -> None:
    other = _client(live, "bystander")
    mine = [_client(live, "many-sessions") for _ in range(3)]
    newest = _client(live, "many-sessions")  # the fourth: the first one's place
    assert mine[0].request("ping")[0].status_code == 404
    for wire in (*mine[1:], newest, other):
        response, [answer] = wire.request("ping")
        assert response.status_code == 200 and answer["result"] == {}
    for wire in (*mine, newest, other):
        wire.close()


def test_a_client_whose_sessions_are_all_busy_gets_503(live) -> None:
    wires = [_client(live, "busy-sessions") for _ in range(3)]
    sessions = live.app.mcp.sessions
    held = [sessions.get(wire.session_id) for wire in wires]
    for session in held:
        session.active += 1  # as a request in flight or an open GET stream holds it
    try:
        refused = _wire_as(live, "busy-sessions")
        response, [answer] = refused.request("initialize", {"protocolVersion": versions.LATEST_HANDSHAKE_VERSION,
                                                            "capabilities": {},
                                                            "clientInfo": {"name": "w", "version": "1"}})
        assert response.status_code == 503 and response.headers["retry-after"] == "5"
        assert answer["error"]["code"] == -32005 and "sessions for this client" in answer["error"]["message"]
        assert _client(live, "another-client").request("ping")[0].status_code == 200
    finally:
        for session in held:
            session.active -= 1
    for wire in wires:
        assert wire.request("ping")[0].status_code == 200
        wire.close()


# --- the ledger alone -----------------------------------------------------------------------------------------


class Holder:
    def __init__(self) -> None:
        self.forgotten: list[int] = []

    def forget(self, event) -> None:
        self.forgotten.append(event.key)


def test_the_ledger_evicts_oldest_first_in_each_pool_and_forgets_closed_clients() -> None:
    ledger = ReplayLedger(per_session=1_000, per_client=1_500, total=2_000)
    a1, a2, b1 = ledger.session("a"), ledger.session("a"), ledger.session("b")
    holder = Holder()
    size = 400 - EVENT_OVERHEAD  # counted as 400
    first = a1.keep(holder, size)
    a1.keep(holder, size)
    a2.keep(holder, size)
    assert holder.forgotten == [] and ledger.client_used("a") == 1_200
    a2.keep(holder, size)  # client "a" at 1,600 > 1,500: its oldest goes
    assert holder.forgotten == [first.key] and ledger.client_used("a") == 1_200
    b1.keep(holder, size)
    b1.keep(holder, size)  # everything at 2,000: within
    assert ledger.used == 2_000
    assert a1.keep(holder, 1_001) is None  # larger than the per-session cap: never kept
    for account in (a1, a2):
        account.close()
    assert ledger.client_used("a") == 0 and "a" not in ledger._clients
    assert ledger.used == 800
    b1.close()
    gc.collect()
    assert ledger.used == 0 and not ledger._clients


def test_an_open_get_stream_does_not_keep_every_later_stream_alive(live) -> None:
    """The session's GET stream stays open for its life; the finished POST streams after it are still let go."""
    async def scenario() -> int:
        wire = _client(live, "get-stream-holder")
        async with httpx.AsyncClient(base_url=live.base, timeout=10) as client:
            async with client.stream("GET", "/mcp", headers=wire.headers({"accept": SSE_ONLY})) as stream:
                assert stream.status_code == 200
                for n in range(40):
                    await asyncio.to_thread(_echo, wire, n, "e")
                kept = len(live.app.mcp.sessions.get(wire.session_id).streams)
        wire.close()
        return kept

    assert asyncio.run(scenario()) <= 16


def test_events_past_their_retention_are_forgotten_while_the_session_lives() -> None:
    """What a burst left behind goes once nobody could still resume it, not when its session idles out."""
    now = [100.0]
    ledger = ReplayLedger(per_session=10_000, per_client=10_000, total=10_000, retention_s=60.0, clock=lambda: now[0])
    burst, honest = ledger.session("burst"), ledger.session("honest")
    holder = Holder()
    old = [burst.keep(holder, 1_000) for _ in range(3)]
    now[0] += 30.0
    recent = honest.keep(holder, 100)
    assert ledger.expire() == 0 and holder.forgotten == []
    now[0] += 31.0  # the burst's events are 61 s old, the honest one 31 s
    assert ledger.expire() == 3
    assert holder.forgotten == [event.key for event in old]
    assert ledger.client_used("burst") == 0 and ledger.client_used("honest") == recent.size
    now[0] += 60.0
    honest.keep(holder, 100)  # keeping an event also lets the expired ones go
    assert recent.key in holder.forgotten and ledger.used == 100 + EVENT_OVERHEAD


def test_a_resumer_within_the_retention_gets_its_events_and_after_it_none() -> None:
    """Over HTTP: the sweeper forgets what is past retention_s though the session is still open."""
    server = build_demo_server()
    with live_server(server, replay_retention_s=0.5) as served:
        wire = Wire(served.base)
        wire.initialize()
        first = _event_ids(_echo(wire, 1, "kept a moment"))[0]
        assert [m["id"] for m in _replayed(wire, first)] == [1]  # resumed within the retention
        deadline = time.monotonic() + 10
        while served.app.mcp.sessions.replay.used and time.monotonic() < deadline:
            time.sleep(0.05)
        assert served.app.mcp.sessions.replay.used == 0
        assert _replayed(wire, first) == [] and wire.session_id in served.app.mcp.sessions._sessions
        wire.close()


def test_events_written_after_a_session_closed_are_not_counted() -> None:
    ledger = ReplayLedger(per_session=1_000, per_client=1_000, total=1_000)
    account = ledger.session("late")
    account.close()
    assert account.keep(Holder(), 10) is None and ledger.used == 0 and not ledger._clients
