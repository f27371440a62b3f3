"""The HTTP benchmark's references measure what they claim: the floor answers as hexmcp does, on hexmcp's
uvicorn protocol (one write per response, a content-length), and bench/http_protocol.py drives each
server's own protocol (ADR 0213)."""

from __future__ import annotations

import sys

import httpx
import pytest
import uvloop

from bench.http import ECHO_CALL, SERVERS, free_port, open_session, start, stop
from bench.http_protocol import measure

pytestmark = pytest.mark.timeout(60)


def test_the_floor_server_answers_the_echo_call_with_a_length_as_hexmcp_does() -> None:
    port = free_port()
    process = start([sys.executable, str(SERVERS / "core_asgi_floor.py"), "--port", str(port)], port)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        headers = open_session(url)  # initialize, initialized, and one checked echo call
        response = httpx.post(url, json=ECHO_CALL, headers=headers)
        assert response.json()["result"]["content"][0]["text"] == "hi"
        assert response.headers["content-length"] == str(len(response.content))
        assert "transfer-encoding" not in response.headers
    finally:
        stop(process)


@pytest.mark.parametrize(("app", "writes"), [("hexmcp", 1), ("floor", 1), ("ceiling", 2)])
def test_the_protocol_bench_drives_each_servers_own_uvicorn_protocol(app: str, writes: int) -> None:
    """One write per response on the fence's coalescing transport, two on uvicorn's plain protocol; the
    bench checks every answer echoes the text."""
    cpu_us, measured_writes = uvloop.run(measure(app, connections=4, requests=40, rounds=1))
    assert measured_writes == writes and cpu_us > 0
