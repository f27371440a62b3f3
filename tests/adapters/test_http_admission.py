"""Connection caps and the request-head deadline on a real server (uvicorn in a thread, WebSocket mounted).

Raw sockets stand in for hostile clients, so the tests see exactly the bytes the server writes; the
WebSocket client is the `websockets` library.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from typing import Iterator

import httpx
import pytest
from websockets.asyncio.client import connect

from hexmcp.adapters.http import HttpConfig, create_app
from hexmcp.adapters.http.admission import REFUSAL_STATUS, RETRY_AFTER_S, ConnectionLedger
from hexmcp.adapters.http.runner import uvicorn_config
from hexmcp.adapters.ws import WsConfig, WsEndpoint, WsUvicornServer

from ..fixtures.ws_live import ws_demo_server
from ..support.net import free_port, uvicorn_in_thread

pytestmark = pytest.mark.timeout(60)

SLACK_S = 3.0


@contextlib.contextmanager
def serving(config: HttpConfig) -> Iterator[ConnectionLedger]:
    server = ws_demo_server()
    endpoint = WsEndpoint(server, WsConfig.from_http(config))
    app = create_app(server, config, extra_routes={endpoint.config.path: endpoint})
    uvicorn_server = WsUvicornServer(uvicorn_config(app, config, log_level="error",
                                                    **endpoint.config.uvicorn_options()), [endpoint])
    with uvicorn_in_thread(uvicorn_server):
        yield uvicorn_server.config.http.keywords["ledger"]


def _until(predicate, what: str, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    return sock


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_beyond_the_per_address_cap_a_connection_gets_503_retry_after_and_close() -> None:
    config = HttpConfig(port=free_port(), head_timeout_s=30, max_connections_per_address=2, max_connections=3)
    with serving(config) as ledger:
        held = [_connect(config.port) for _ in range(2)]
        _until(lambda: ledger.open_from("127.0.0.1") == 2, "the two connections were not admitted")
        refused = _connect(config.port)
        refused.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = _read_all(refused)
        head, _, body = answer.partition(b"\r\n\r\n")
        lines = head.decode().lower().split("\r\n")
        assert lines[0].startswith(f"http/1.1 {REFUSAL_STATUS} ")
        assert f"retry-after: {RETRY_AFTER_S}" in lines and "connection: close" in lines
        assert f"content-length: {len(body)}" in lines
        assert body.decode() == "Too many connections from 127.0.0.1: at most 2 at once, retry shortly\n"

        # Another address is served; a fourth connection meets the total cap instead.
        other = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2"))
        assert other.get(f"http://127.0.0.1:{config.port}/health").status_code == 200
        busy = _connect(config.port, source="127.0.0.3")
        assert b"Server busy: 3 connections already open" in _read_all(busy)
        other.close()
        for sock in [*held, refused, busy]:
            sock.close()
        _until(lambda: len(ledger) == 0, "closed connections were not released")


def test_a_head_not_complete_in_time_is_closed_on_a_new_and_on_a_kept_alive_connection() -> None:
    config = HttpConfig(port=free_port(), head_timeout_s=0.5)
    with serving(config) as ledger:
        fresh = _connect(config.port)
        started = time.monotonic()
        fresh.sendall(b"GET /health HTTP/1.1\r\n")
        assert _read_all(fresh) == b""
        assert config.head_timeout_s * 0.9 <= time.monotonic() - started < config.head_timeout_s + SLACK_S

        kept = _connect(config.port)
        for _ in range(2):  # idle between requests is keep-alive's business (5 s), not the head deadline's
            kept.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert kept.recv(65536).startswith(b"HTTP/1.1 200 ")
            time.sleep(config.head_timeout_s * 2)
        kept.sendall(b"GET /health HTTP/1.1\r\n")
        started = time.monotonic()
        assert _read_all(kept) == b""
        assert time.monotonic() - started < config.head_timeout_s + SLACK_S
        for sock in (fresh, kept):
            sock.close()
        _until(lambda: len(ledger) == 0, "closed connections were not released")


def test_a_later_head_gets_its_whole_deadline_from_the_timer_an_earlier_one_armed() -> None:
    """One timer per connection: armed for the first head, it fires while a later head is being read and
    must then wait for that head's own deadline, not close the connection at the first one's."""
    config = HttpConfig(port=free_port(), head_timeout_s=1.0)
    with serving(config):
        kept = _connect(config.port)
        kept.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert kept.recv(65536).startswith(b"HTTP/1.1 200 ")
        time.sleep(config.head_timeout_s * 0.6)  # the first head's timer is still armed
        started = time.monotonic()
        kept.sendall(b"GET /health HTTP/1.1\r\n")
        assert _read_all(kept) == b""
        assert config.head_timeout_s * 0.9 <= time.monotonic() - started < config.head_timeout_s + SLACK_S
        kept.close()


def test_an_open_websocket_outlives_the_head_deadline_and_releases_its_place() -> None:
    config = HttpConfig(port=free_port(), head_timeout_s=0.3)

    async def talk() -> None:
        async with connect(f"ws://127.0.0.1:{config.port}/ws") as websocket:
            await asyncio.sleep(config.head_timeout_s * 4)
            await websocket.send('{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
            assert '"id":1' in (await websocket.recv()).replace(" ", "")
            assert len(ledger) == 1

    with serving(config) as ledger:
        asyncio.run(talk())
        _until(lambda: len(ledger) == 0, "the closed WebSocket was not released")
