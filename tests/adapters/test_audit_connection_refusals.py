"""The audit trail of connections refused before the app sees a request (ADR 1131, amendment): the fence's
431, 400, head deadline and connection caps each get a `refusal` line (salted peer, reason, status,
eventId, transport "http"), and a flood of refused connections from one address writes a bounded number
of lines that still count every refusal (`suppressed`)."""

from __future__ import annotations

import hashlib
import hmac
import socket
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from hexmcp.adapters.audit.reader import BadLine, read_trail
from hexmcp.adapters.http.connection_refusals import ConnectionReason, ConnectionRefusals
from hexmcp.core.observation import ObservedRefusal

from .guard_servers import serve

pytestmark = pytest.mark.timeout(120)

HEAD_TIMEOUT_S = 0.5
PER_ADDRESS = 3


class Trail:
    def __init__(self, base: str, path: Path) -> None:
        self.base = base
        self.path = path
        host, port = base.removeprefix("http://").rsplit(":", 1)
        self.address = (host, int(port))

    def lines(self, reason: str, at_least: int = 1) -> list[dict[str, Any]]:
        for _ in range(200):  # written when refused; the client may read its answer a moment before
            entries = list(read_trail(self.path))
            assert not [e for e in entries if isinstance(e, BadLine)]
            found = [e for e in entries if e.get("reason") == reason]  # type: ignore[union-attr]
            if len(found) >= at_least:
                return found  # type: ignore[return-value]
            time.sleep(0.02)
        raise AssertionError(f"fewer than {at_least} audit lines with reason {reason}")

    def salted_peer(self) -> str:
        salt = (self.path.parent / (self.path.name + ".salt")).read_bytes().strip()
        return "address:" + hmac.new(salt, b"address:127.0.0.1", hashlib.sha256).hexdigest()[:32]

    def exchange(self, data: bytes, *, pause_s: float = 0.0) -> bytes:
        """Send `data` on a new connection and read until the server closes it."""
        with socket.create_connection(self.address, timeout=10) as sock:
            sock.sendall(data)
            if pause_s:
                time.sleep(pause_s)
            received = b""
            while chunk := _recv(sock):
                received += chunk
            return received


def _recv(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except ConnectionResetError:
        return b""


@pytest.fixture(scope="module")
def trail(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trail]:
    path = tmp_path_factory.mktemp("connaudit") / "audit.log"
    with serve("--audit-log", str(path), "--head-timeout", str(HEAD_TIMEOUT_S),
               "--max-connections-per-address", str(PER_ADDRESS)) as base:
        yield Trail(base, path)


def _assert_line(line: dict[str, Any], trail: Trail, *, status: int | None, code: str) -> None:
    assert line["kind"] == "refusal" and line["transport"] == "http"
    assert line["client"] == trail.salted_peer()
    assert line["httpStatus"] == status and line["errorCode"] == code
    assert line["eventId"].startswith("ev-")
    assert "127.0.0.1" not in trail.path.read_text()  # the peer only ever salted


def _still_serving(trail: Trail) -> None:
    assert httpx.get(trail.base + "/health").status_code == 200


def test_an_oversized_head_gets_a_431_and_a_line(trail: Trail) -> None:
    answer = trail.exchange(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 64 * 1024 + b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 431 ")
    [line] = trail.lines("head_too_large")
    _assert_line(line, trail, status=431, code="payload_too_large")
    assert line["suppressed"] == 0
    _still_serving(trail)


def test_a_malformed_request_gets_a_400_and_a_line(trail: Trail) -> None:
    answer = trail.exchange(b"GARBAGE\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 ")
    [line] = trail.lines("malformed_request")
    _assert_line(line, trail, status=400, code="invalid_request")
    _still_serving(trail)


def test_a_head_past_the_deadline_is_closed_with_a_line(trail: Trail) -> None:
    started = time.monotonic()
    answer = trail.exchange(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # never finished: the server closes
    assert answer == b"" and time.monotonic() - started >= HEAD_TIMEOUT_S * 0.9
    [line] = trail.lines("head_timeout")
    _assert_line(line, trail, status=None, code="request_timeout")
    _still_serving(trail)


def test_connections_past_the_per_address_cap_get_a_503_and_a_line(trail: Trail) -> None:
    held = [socket.create_connection(trail.address, timeout=10) for _ in range(PER_ADDRESS)]
    try:
        time.sleep(0.1)  # admitted (the server counts them as it accepts)
        answer = trail.exchange(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 503 ")
        [line] = trail.lines("per_address_connections")
        _assert_line(line, trail, status=503, code="server_busy")
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.2)
    _still_serving(trail)


def test_a_flood_of_malformed_connections_writes_a_bounded_count_of_lines_that_counts_them_all(
        tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    flood = 1000
    with serve("--audit-log", str(path)) as base:
        trail = Trail(base, path)
        started = time.monotonic()
        for _ in range(flood):
            assert trail.exchange(b"GARBAGE\r\n\r\n").startswith(b"HTTP/1.1 400 ")
        elapsed = time.monotonic() - started
        time.sleep(1.1)  # the last window ends: the next refusal's line carries its count
        assert trail.exchange(b"GARBAGE\r\n\r\n").startswith(b"HTTP/1.1 400 ")
        lines = trail.lines("malformed_request")
        _still_serving(trail)
    # One line per second of flood at most (plus the window it began in, and the one after the pause) ...
    assert 2 <= len(lines) <= elapsed + 2, (len(lines), elapsed)
    # ... and every refused connection is counted: written, or suppressed and counted in a later line.
    assert sum(1 + line["suppressed"] for line in lines) == flood + 1
    assert all(line["suppressedElsewhere"] == 0 for line in lines)
    print(f"{flood + 1} malformed connections in {elapsed:.2f} s -> {len(lines)} audit lines, "
          f"{path.stat().st_size} bytes")


class _Heard:
    def __init__(self) -> None:
        self.refusals: list[ObservedRefusal] = []

    def request_refused(self, refusal: ObservedRefusal) -> None:
        self.refusals.append(refusal)


def test_the_table_of_peers_is_bounded_and_what_it_forgets_is_counted_in_the_next_line() -> None:
    now = [0.0]
    heard = _Heard()
    refusals = ConnectionRefusals([heard], window_s=1.0, max_peers=2, clock=lambda: now[0])
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"):  # the last two find no room
        refusals.refused(address, ConnectionReason.MALFORMED)
    refusals.refused("10.0.0.1", ConnectionReason.MALFORMED)  # within its window: counted
    assert len(heard.refusals) == 2
    now[0] = 1.5
    refusals.refused("10.0.0.5", ConnectionReason.HEAD_TIMEOUT)  # ended windows forgotten: room again
    last = heard.refusals[-1]
    assert (last.client_id, last.reason, last.suppressed) == ("address:10.0.0.5", "head_timeout", 0)
    assert last.suppressed_elsewhere == 3  # two that found no room, one suppressed in a forgotten window
    assert refusals.lines + refusals.suppressed == 6


def test_one_line_per_address_and_reason_per_window_each_counting_the_refusals_before_it() -> None:
    now = [0.0]
    heard = _Heard()
    # A window a hair under a second, so no refusal falls on its edge whatever floats round to.
    refusals = ConnectionRefusals([heard], window_s=0.995, clock=lambda: now[0])
    for tick in range(300):  # 100 refusals a second for 3 s, from one address, alternating two reasons
        now[0] = tick / 100
        refusals.refused("10.0.0.1", ConnectionReason.MALFORMED if tick % 2 else ConnectionReason.HEAD_TOO_LARGE)
    now[0] = 3.5
    refusals.refused("10.0.0.1", ConnectionReason.MALFORMED)
    malformed = [r for r in heard.refusals if r.reason == "malformed_request"]
    oversized = [r for r in heard.refusals if r.reason == "head_too_large"]
    assert [r.suppressed for r in malformed] == [0, 49, 49, 49] and [r.suppressed for r in oversized] == [0, 49, 49]
    assert [r.http_status for r in oversized] == [431] * 3 and len({r.event_id for r in heard.refusals}) == 7
