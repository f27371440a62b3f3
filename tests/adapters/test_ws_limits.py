"""The WebSocket adapter's bounds, over real sockets: frame size, slow consumers, handshake refusals,
connection cap, keepalive, graceful shutdown — and that one bad client never hurts another.

Close codes and error codes come from the adapter's own tables (`CloseCode`, `jsonrpc`), not literals.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import struct
import time

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from hexmcp.wire import jsonrpc
from hexmcp.adapters.http.status import http_status
from hexmcp.adapters.ws import CloseCode, WsConfig, WsEndpoint
from hexmcp.core import ErrorCode

from ..fixtures.ws_live import ChatGptClient, live_ws, ws_demo_server

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

TOKEN = "let-me-in"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ALLOWED_ORIGIN = "https://chat.example"
OUR_LIMIT = 64 * 1024  # the adapter's own check
UVICORN_LIMIT = 1024 * 1024  # uvicorn configured larger, so both paths to 1009 are exercised


@pytest.fixture(scope="module")
def tight():
    config = WsConfig(auth_token=TOKEN, max_frame_bytes=OUR_LIMIT, send_queue_messages=8,
                      send_queue_chars=256 * 1024, close_timeout_s=5, max_connections=4,
                      allowed_origins=[ALLOWED_ORIGIN])
    with live_ws(ws_demo_server(), config, ws_max_size=UVICORN_LIMIT) as server:
        yield server


async def idle(endpoint: WsEndpoint, timeout: float = 5.0) -> None:
    """Wait until the server has finished with every socket earlier tests opened."""
    deadline = time.monotonic() + timeout
    while endpoint.connections:
        assert time.monotonic() < deadline, "sockets left open"
        await asyncio.sleep(0.02)


async def closed_with(ws, timeout: float = 10.0) -> int:
    """Read until the server closes; the close code it sent."""
    return (await closed_with_reason(ws, timeout))[0]


async def closed_with_reason(ws, timeout: float = 10.0) -> tuple[int, str]:
    """Read until the server closes; the close code it sent and its reason."""
    with pytest.raises(ConnectionClosed) as closed:
        async with asyncio.timeout(timeout):
            while True:
                await ws.recv()
    assert closed.value.rcvd is not None, "no close frame received"
    return closed.value.rcvd.code, closed.value.rcvd.reason


# --- frame size -------------------------------------------------------------------------------

async def test_oversize_frame_closes_with_1009_by_our_check(tight) -> None:
    before = tight.endpoint.closes[CloseCode.MESSAGE_TOO_BIG]
    async with ChatGptClient.connect(tight.url, additional_headers=AUTH) as client:
        await client.initialize()
        await client.send({"id": 99, "method": "tools/call",
                           "params": {"name": "echo", "arguments": {"text": "é" * OUR_LIMIT}}})
        code, reason = await closed_with_reason(client.ws)
        assert code == CloseCode.MESSAGE_TOO_BIG
        assert "quote eventId ev-" in reason  # the id its log line and audit line carry (it named none)
    await idle(tight.endpoint)
    assert tight.endpoint.closes[CloseCode.MESSAGE_TOO_BIG] == before + 1  # sent by us, not by uvicorn


async def test_oversize_frame_closes_with_1009_by_uvicorn(tight) -> None:
    async with ChatGptClient.connect(tight.url, additional_headers=AUTH) as client:
        await client.ws.send("x" * (UVICORN_LIMIT + 1))
        assert await closed_with(client.ws) == CloseCode.MESSAGE_TOO_BIG
    await idle(tight.endpoint)
    assert tight.endpoint.closes[None] >= 1  # uvicorn closed it; our side only saw the disconnect


async def test_default_config_allows_4_mib_and_closes_above() -> None:
    config = WsConfig()
    with live_ws(ws_demo_server(), config) as server:
        async with ChatGptClient.connect(server.url, max_size=None) as client:
            await client.initialize()
            padding = config.max_frame_bytes - 200
            answer = await client.call("tools/call", {"name": "echo", "arguments": {"text": "y" * padding}})
            assert len(answer["result"]["content"][0]["text"]) == padding
            await client.ws.send("z" * (config.max_frame_bytes + 1))
            assert await closed_with(client.ws) == CloseCode.MESSAGE_TOO_BIG


async def test_invalid_utf8_in_a_text_frame_is_closed_by_uvicorn_with_1007(tight, caplog) -> None:
    caplog.set_level(logging.WARNING)
    # Listen on uvicorn's logger itself: a server started elsewhere in the run with uvicorn's default
    # log config stops its records from propagating to the root logger caplog listens on.
    uvicorn_log = logging.getLogger("uvicorn.error")
    uvicorn_log.addHandler(caplog.handler)
    try:
        async with ChatGptClient.connect(tight.url, additional_headers=AUTH) as client:
            await client.ws.send(b'{"id":1,"method":"\xff"}', text=True)
            assert await closed_with(client.ws) == 1007  # RFC 6455 "invalid frame payload data"; not ours to map
    finally:
        uvicorn_log.removeHandler(caplog.handler)
    # uvicorn's ERROR + UnicodeDecodeError traceback becomes one warning (adapters/ws/server_log.py).
    # (A set: when the record also propagates, caplog sees it twice.)
    records = {(r.levelname, r.getMessage(), r.exc_info) for r in caplog.records if r.name == "uvicorn.error"}
    assert records == {("WARNING", "invalid UTF-8 in a WebSocket text frame; closed with 1007", None)}


# --- a client that does not read ---------------------------------------------------------------

def small_receive_buffer_socket(port: int) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # so the server's buffers fill quickly
    sock.connect(("127.0.0.1", port))
    return sock


async def test_slow_consumer_is_closed_with_1013_and_others_are_unaffected(tight) -> None:
    await idle(tight.endpoint)
    before = tight.endpoint.closes[CloseCode.TRY_AGAIN_LATER]
    sock = small_receive_buffer_socket(tight.port)
    async with ChatGptClient.connect(tight.url, additional_headers=AUTH, sock=sock, max_queue=2) as slow, \
            ChatGptClient.connect(tight.url, additional_headers=AUTH) as good:
        await slow.initialize()
        await good.initialize()
        # The slow client asks for far more than the socket, the transport and the queue can hold,
        # and stops reading.
        for _ in range(300):
            await slow.send({"id": slow.next_id(), "method": "tools/call",
                             "params": {"name": "blob", "arguments": {"size": 48 * 1024}}})
        latencies = []
        deadline = time.monotonic() + 15
        while tight.endpoint.closes[CloseCode.TRY_AGAIN_LATER] == before:
            assert time.monotonic() < deadline, "the slow consumer was never closed"
            started = time.perf_counter()
            answer = await good.call("tools/call", {"name": "echo", "arguments": {"text": "fine"}})
            latencies.append(time.perf_counter() - started)
            assert answer["result"]["content"][0]["text"] == "fine"
        assert max(latencies) < 1.0
        # Now read: what was already on its way, then the close frame.
        code, reason = await closed_with_reason(slow.ws)
        assert code == CloseCode.TRY_AGAIN_LATER and "quote eventId ev-" in reason, reason
        assert (await good.call("ping"))["result"] == {}


@pytest.mark.parametrize("count", [300, 700])
def test_a_burst_of_pipelined_requests_in_one_write_is_answered_not_closed_as_a_slow_consumer(count: int) -> None:
    """A client that writes many requests at once and reads everything is not a slow consumer: its answers
    may outrun the send queue before the writer has run once, but the writer only waits on the transport for
    a client that does not read. Each request gets its answer, or -32005 past the in-flight cap (512).
    (Before: 300 pings in one TCP write got no answer at all and a 1013 "send queue full" close.)"""
    from tests.adversarial.ws_frames import CLOSE, TEXT, frame, open_socket, read_frames

    with live_ws(ws_demo_server()) as live:  # the default bounds: 256 queued messages, 512 in flight
        sock, _ = open_socket(live.port, token=None)
        with sock:
            init = {"id": "init", "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "burst", "version": "1"}}}
            sock.sendall(frame(TEXT, json.dumps(init).encode()) + frame(TEXT, b'{"method":"notifications/initialized"}'))
            assert read_frames(sock, quiet_s=5, limit_s=10, until_text=1).frames[0].opcode == TEXT
            sock.sendall(b"".join(frame(TEXT, json.dumps({"id": n, "method": "ping"}).encode()) for n in range(count)))
            received = read_frames(sock, quiet_s=5, limit_s=20, until_text=count)
    assert not any(f.opcode == CLOSE for f in received.frames), [f.close_code for f in received.frames]
    answers = [json.loads(f.payload) for f in received.frames if f.opcode == TEXT]
    assert sorted(a["id"] for a in answers) == list(range(count))
    assert all("result" in a or a["error"]["code"] == jsonrpc.code_for(ErrorCode.SERVER_BUSY) for a in answers), \
        [a for a in answers if "result" not in a][:3]


# --- handshake refusals -------------------------------------------------------------------------

@pytest.mark.parametrize(("headers", "code"), [
    ({}, ErrorCode.UNAUTHORIZED),
    ({"Authorization": "Bearer wrong"}, ErrorCode.UNAUTHORIZED),
    ({**AUTH, "Origin": "http://evil.example"}, ErrorCode.FORBIDDEN),
    ({**AUTH, "Origin": "null"}, ErrorCode.FORBIDDEN),
    ({**AUTH, "Origin": "http://localhost:5173"}, ErrorCode.FORBIDDEN),  # another local port: another web origin
])
async def test_handshake_refused_before_accept(tight, headers, code) -> None:
    with pytest.raises(InvalidStatus) as refused:
        async with connect(tight.url, additional_headers=headers):
            pass
    response = refused.value.response
    assert response.status_code == http_status(code)  # the HTTP adapter's table: 401 / 403
    assert json.loads(response.body)["error"]["code"] == jsonrpc.ERROR_CODES[code]
    if code is ErrorCode.UNAUTHORIZED:
        assert response.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("headers", [AUTH, {"authorization": f"bearer  {TOKEN}", "Origin": ALLOWED_ORIGIN},
                                     {**AUTH, "Origin": "http://localhost:{port}"}])
async def test_handshake_accepted_with_token_and_allowed_origin(tight, headers) -> None:
    headers = {name: value.format(port=tight.port) for name, value in headers.items()}  # our own port
    async with ChatGptClient.connect(tight.url, additional_headers=headers) as client:
        assert (await client.call("ping"))["result"] == {}


def raw_handshake(port: int, host: str, extra: str = "") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall((f"GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                  f"{extra}\r\n").encode())
    return sock


def read_all(sock: socket.socket, timeout: float) -> bytes:
    sock.settimeout(timeout)
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except (TimeoutError, ConnectionResetError):
        pass
    return b"".join(chunks)


async def test_foreign_host_header_is_refused(tight) -> None:
    sock = raw_handshake(tight.port, "evil.example", f"Authorization: Bearer {TOKEN}\r\n")
    with sock:
        answer = await asyncio.to_thread(read_all, sock, 5)
    assert answer.startswith(f"HTTP/1.1 {http_status(ErrorCode.FORBIDDEN)}".encode())


async def test_connections_beyond_the_cap_get_503(tight) -> None:
    await idle(tight.endpoint)
    clients = [connect(tight.url, additional_headers=AUTH) for _ in range(tight.config.max_connections)]
    opened = [await c.__aenter__() for c in clients]
    try:
        with pytest.raises(InvalidStatus) as refused:
            async with connect(tight.url, additional_headers=AUTH):
                pass
        assert refused.value.response.status_code == http_status(ErrorCode.SERVER_BUSY)
        assert refused.value.response.headers["Retry-After"]
    finally:
        for ws in opened:
            await ws.close()


# --- keepalive ----------------------------------------------------------------------------------

def close_codes(frames: bytes) -> list[int]:
    """Close codes in a stream of unmasked server frames (after the HTTP response head)."""
    codes = []
    i = frames.index(b"\r\n\r\n") + 4
    while i + 2 <= len(frames):
        opcode, length = frames[i] & 0x0F, frames[i + 1] & 0x7F
        i += 2
        if length == 126:
            length, i = struct.unpack("!H", frames[i:i + 2])[0], i + 2
        if opcode == 0x8 and length >= 2:
            codes.append(struct.unpack("!H", frames[i:i + 2])[0])
        i += length
    return codes


async def test_a_dead_peer_is_pinged_then_closed_while_a_live_one_stays() -> None:
    config = WsConfig(ping_interval_s=0.2, ping_timeout_s=0.2)
    with live_ws(ws_demo_server(), config) as server:
        async with ChatGptClient.connect(server.url) as alive:
            await alive.initialize()
            dead = raw_handshake(server.port, "127.0.0.1")  # never answers a ping
            with dead:
                frames = await asyncio.to_thread(read_all, dead, 3)
            assert frames.startswith(b"HTTP/1.1 101")
            assert close_codes(frames) == [CloseCode.INTERNAL_ERROR]  # uvicorn's "keepalive ping timeout"
            await idle_except(server.endpoint, 1)
            assert (await alive.call("ping"))["result"] == {}  # its pongs kept it open for the same 1+ s


async def idle_except(endpoint: WsEndpoint, remaining: int) -> None:
    deadline = time.monotonic() + 5
    while len(endpoint.connections) > remaining:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)


# --- graceful shutdown --------------------------------------------------------------------------

async def test_shutdown_answers_in_flight_requests_then_closes_with_1001() -> None:
    with live_ws(ws_demo_server()) as server:
        async with ChatGptClient.connect(server.url) as client:
            await client.initialize()
            slow_id = client.next_id()
            await client.send({"id": slow_id, "method": "tools/call",
                               "params": {"name": "slow", "arguments": {"seconds": 0.8, "steps": 1}}})
            await asyncio.sleep(0.1)
            stopping = asyncio.ensure_future(asyncio.to_thread(server.stop))
            while not server.endpoint.stopping:
                await asyncio.sleep(0.01)
            late_id = client.next_id()
            await client.send({"id": late_id, "method": "ping"})
            # The listener is closed before the drain begins: a new connection is refused by the kernel,
            # so a balancer retries it elsewhere.
            with pytest.raises(ConnectionRefusedError):
                async with connect(server.url):
                    pass
            seen = {}
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    message = await client.recv()
                    seen[message["id"]] = message
            assert closed.value.rcvd.code == CloseCode.GOING_AWAY
            assert seen[slow_id]["result"]["content"][0]["text"] == "slept 0.8"
            assert seen[late_id]["error"]["code"] == jsonrpc.ERROR_CODES[ErrorCode.SERVER_BUSY]
            await stopping


# --- the endpoint outside a WebSocket -----------------------------------------------------------

async def test_plain_http_on_the_endpoint_gets_426() -> None:
    endpoint = WsEndpoint(ws_demo_server())
    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}

    await endpoint({"type": "http", "path": "/ws", "headers": []}, receive, send)
    assert sent[0]["status"] == 426


async def test_refusal_without_the_http_response_extension_closes_before_accept() -> None:
    endpoint = WsEndpoint(ws_demo_server(), WsConfig(auth_token=TOKEN))
    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "websocket.connect"}

    await endpoint({"type": "websocket", "path": "/ws", "headers": [(b"host", b"localhost")], "subprotocols": []},
                   receive, send)
    assert [m["type"] for m in sent] == ["websocket.close"]
