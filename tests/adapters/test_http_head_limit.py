"""Request heads beyond `HttpConfig.max_head_bytes` get 431 and a closed connection (issue 30).

Before the limit a 32 MiB header got `200 OK`, the whole of it held by the server first. Against a real
`hexmcp serve` (default limit, 32 KiB): the endless header is refused once the limit is passed and the
server's RSS does not grow by what was sent (what follows the 431 is read and dropped while the connection
lingers, so the client reads the 431 rather than a reset); a head just within the limit is served; a pipelined
request behind served ones is refused on its own. A malformed request pipelined behind complete ones is
refused the same way: they are answered first, in order, then the 400, then the close.
"""

from __future__ import annotations

import socket
from typing import Iterator

import psutil
import pytest

from hexmcp.adapters.http import HttpConfig
from hexmcp.adapters.http.head_limit import HeadMeter
from tests.adversarial.raw_http import exchange
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


def _tools_list() -> bytes:
    return (b"POST /mcp/tools/list HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 2\r\n\r\n{}")


HONEST = _request("/health", {}) + _tools_list() + _request("/no-such-path", {})
"""Three requests whose answers tell them apart: the health report, the tool list, a 404."""


def _assert_honest_answers_in_order(responses: list) -> None:
    assert [response.status for response in responses[:3]] == [200, 200, 404]
    assert b'"status":"ok"' in responses[0].body, responses[0].body[:200]
    assert b'"tools":' in responses[1].body, responses[1].body[:200]


def test_a_pipelined_oversized_head_is_refused_after_the_requests_before_it_are_answered(served) -> None:
    result = exchange(served.port, HONEST + _request("/health", {"X-Padding": "c" * (LIMIT + 10)}), expect=5)
    _assert_honest_answers_in_order(result.responses)
    assert [response.status for response in result.responses[3:]] == [431]
    assert result.closed and not result.reset and not result.leftover


MALFORMED = {
    "a junk request line": b"GARBAGE\r\n\r\n",
    "a header line without a colon": b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n",
    "a bad chunk size after a whole head": (b"POST /mcp/tools/list HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
}


@pytest.mark.parametrize("malformed", MALFORMED.values(), ids=MALFORMED.keys())
def test_requests_pipelined_before_a_malformed_one_are_answered_in_order_then_400_and_close(
        served, malformed: bytes) -> None:
    """All in one write, so the parser meets the malformed part while the first answer is still being
    computed; the request after it is neither parsed nor answered."""
    result = exchange(served.port, HONEST + malformed + _request("/health", {}), expect=5)
    _assert_honest_answers_in_order(result.responses)
    refusal = result.responses[3:]
    assert [response.status for response in refusal] == [400], [r.status for r in result.responses]
    assert refusal[0].header(b"connection") == b"close"
    assert result.closed and not result.reset and not result.leftover
    assert served.health().status_code == 200


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

