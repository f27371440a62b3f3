"""Request heads beyond `HttpConfig.max_head_bytes` get 431 and a closed connection (issue 30).

Before the limit a 32 MiB header got `200 OK`, the whole of it held by the server first. Against a real
`hexmcp serve` (default limit, 32 KiB): the endless header is refused once the limit is passed and the
server's RSS does not grow by what was sent (what follows the 431 is read and dropped while the connection
lingers, so the client reads the 431 rather than a reset); a head just within the limit is served; a pipelined
request behind a served one is refused on its own.
"""

from __future__ import annotations

import socket
from typing import Iterator

import psutil
import pytest

from hexmcp.adapters.http import HttpConfig
from hexmcp.adapters.http.head_limit import HeadMeter
from tests.support.serve_process import LIGHT, ServeProcess, serve_process

pytestmark = pytest.mark.timeout(120)

LIMIT = HttpConfig().max_head_bytes


@pytest.fixture(scope="module")
def served() -> Iterator[ServeProcess]:
    with serve_process(*LIGHT) as server:
        yield server


def _connect(served: ServeProcess) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", served.port), timeout=10)
    return sock


def _read_until_closed(sock: socket.socket, timeout_s: float = 10.0) -> bytes:
    sock.settimeout(timeout_s)
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except (ConnectionResetError, socket.timeout):
        pass
    return b"".join(chunks)


def _request(path: str, headers: dict[str, str]) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_an_endless_header_is_refused_while_it_is_sent(served, capsys: pytest.CaptureFixture[str]) -> None:
    process = psutil.Process(served.process.pid)
    before = process.memory_info().rss
    sock = _connect(served)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ")
    chunk = b"a" * 65536
    sent = 0
    try:
        while sent < 32 * 2**20:
            sock.sendall(chunk)
            sent += len(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass
    grown = process.memory_info().rss - before  # while the connection is still open
    answer = _read_until_closed(sock)
    sock.close()
    with capsys.disabled():
        print(f"\nendless header: {sent / 2**20:.1f} MiB sent; server RSS "
              f"{before / 2**20:.1f} -> {(before + grown) / 2**20:.1f} MiB")
    assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), answer[:200]
    assert b"connection: close" in answer.lower()
    assert grown < 16 * 2**20  # what followed the refusal was read and dropped, not kept
    assert served.health().status_code == 200  # and serves everyone else as before


def test_a_head_within_the_limit_is_served_and_one_just_over_it_is_not(served) -> None:
    padding = LIMIT - 200  # the request line and the other headers fit in what is left
    sock = _connect(served)
    sock.sendall(_request("/health", {"X-Padding": "a" * padding}))
    assert _read_until_closed(sock, timeout_s=2).startswith(b"HTTP/1.1 200 ")
    sock.close()
    sock = _connect(served)
    sock.sendall(_request("/health", {"X-Padding": "a" * LIMIT}))  # in one write: one or two reads
    assert _read_until_closed(sock).startswith(b"HTTP/1.1 431 ")
    sock.close()


def test_many_small_headers_count_together(served) -> None:
    sock = _connect(served)
    sock.sendall(_request("/health", {f"X-H{n}": "b" * 100 for n in range(LIMIT // 100)}))
    assert _read_until_closed(sock).startswith(b"HTTP/1.1 431 ")
    sock.close()


def test_a_pipelined_oversized_head_is_refused_after_the_request_before_it_is_answered(served) -> None:
    sock = _connect(served)
    sock.sendall(_request("/health", {}) + _request("/health", {"X-Padding": "c" * (LIMIT + 10)}))
    answer = _read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 200 ") and b"HTTP/1.1 431 " in answer, answer[:300]
    sock.close()


# --- the meter alone ------------------------------------------------------------------------------------------


def test_the_meter_finds_the_end_of_a_head_split_across_reads() -> None:
    meter = HeadMeter(100)
    assert meter.fits(b"GET / HTTP/1.1\r\nHost: x\r\n\r")
    assert meter.fits(b"\n" + b"body" * 100)  # the blank line completes here: the body is not counted
    meter.ended()
    assert meter.fits(b"x" * 1000)  # between heads nothing is counted
    meter.began()
    assert meter.fits(b"x" * 60) and not meter.fits(b"x" * 41)


def test_bare_lf_line_ends_end_a_head_too() -> None:
    meter = HeadMeter(50)
    assert meter.fits(b"GET / HTTP/1.1\nHost: x\n\n" + b"body" * 100)

