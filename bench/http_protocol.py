"""The server's work per HTTP request including uvicorn's, in process: each server's own uvicorn protocol
fed request bytes, no socket and no load generator.

    python -m bench.http_protocol [--app hexmcp|floor|ceiling] [--connections 32] [--requests N] [--rounds R]

`bench.http_inprocess` calls the ASGI app directly and so misses what uvicorn does per request, which
differs between the servers: hexmcp and the floor (ADR 0213) run on `uvicorn_fence.GuardedHttpToolsProtocol`
(hooks per request, the coalescing transport), the ceiling on uvicorn's plain `HttpToolsProtocol`. Here
`--connections` protocol objects (as many as wrk's connections) each get a kept-alive POST of the echo
`tools/call` per round through `data_received`, exactly the bytes wrk sends; the loop (uvloop) then runs
their tasks, and the transport records what uvicorn writes. Per request this counts httptools' parse,
uvicorn's cycle, keep-alive timer and response head, the fence, the app and the core; not the kernel,
nor uvloop's socket reads and writes (the same for every server, apart from the number of writes, which
is printed). Printed: thread CPU per request (best of the rounds) and writes per response.

Under `valgrind --tool=callgrind --callgrind-out-file=/dev/null`, run `--rounds 1` with two request
counts (e.g. 320 and 1,920) and divide the difference of the "Collected" totals by the difference of the
counts: the instructions per request, deterministic to about 1 % whatever else the machine runs.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import sys
import time
from typing import Any

import orjson
import uvicorn
import uvloop
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from hexmcp.adapters.http import HttpConfig
from hexmcp.adapters.http.runner import uvicorn_config

from bench.http import ECHO_CALL, VERSION
from bench.http_inprocess import load_app

DATE = [(b"date", b"Tue, 24 Nov 2026 00:00:00 GMT")]  # uvicorn's Server refreshes it once a second


class RecordingTransport:
    """What uvicorn's protocol needs of a socket transport; keeps the bytes written."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.writes: list[bytes] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", self.port), "sockname": ("127.0.0.1", 8090)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def protocol_factory(name: str, app: Any, loop: asyncio.AbstractEventLoop) -> tuple[ServerState, Any]:
    """The server state and a connection's protocol, as the server named `name` builds them (bench/servers/*)."""
    if name == "hexmcp":
        config = uvicorn_config(app, HttpConfig())
    elif name == "floor":
        from core_asgi_floor import floor_config  # bench/servers heads sys.path once load_app ran

        config = floor_config()
    else:
        from raw_asgi_echo import UVICORN_OPTIONS

        config = uvicorn.Config(app, **UVICORN_OPTIONS)
    config.load()
    state = ServerState()
    state.default_headers = DATE + config.encoded_headers
    return state, functools.partial(config.http_protocol_class, config=config, server_state=state, app_state={},
                                    _loop=loop)


def request_bytes(body: bytes, session: bytes | None) -> bytes:
    head = [b"POST /mcp HTTP/1.1", b"host: 127.0.0.1:8090", b"content-type: application/json",
            b"accept: application/json, text/event-stream", b"mcp-protocol-version: " + VERSION.encode()]
    if session is not None:
        head.append(b"mcp-session-id: " + session)
    head.append(b"content-length: %d" % len(body))
    return b"\r\n".join(head) + b"\r\n\r\n" + body


async def exchange(state: ServerState, connections: list[tuple[Any, RecordingTransport]],
                   payloads: list[bytes]) -> list[bytes]:
    """One request on each connection, then the loop until uvicorn has completed every response (it
    counts them in `total_requests`): their answers."""
    done = state.total_requests + len(connections)
    for (protocol, transport), payload in zip(connections, payloads):
        transport.writes.clear()
        protocol.data_received(payload)
    while state.total_requests < done:
        await asyncio.sleep(0)
    await asyncio.sleep(0)  # what a transport holds to the end of the pass leaves now
    return [b"".join(transport.writes) for _, transport in connections]


async def measure(name: str, connections: int, requests: int, rounds: int) -> tuple[float, float]:
    loop = asyncio.get_running_loop()
    app = load_app(name)
    if hasattr(app, "startup"):
        await app.startup()
    state, make = protocol_factory(name, app, loop)
    opened = []
    for number in range(connections):
        protocol, transport = make(), RecordingTransport(50000 + number)
        protocol.connection_made(transport)
        opened.append((protocol, transport))
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
    answer = (await exchange(state, opened[:1], [request_bytes(orjson.dumps(initialize), None)]))[0]
    session = next((line.split(b": ", 1)[1] for line in answer.split(b"\r\n") if line.startswith(b"mcp-session-id:")), None)
    initialized = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    await exchange(state, opened[:1], [request_bytes(initialized, session)])
    calls = [request_bytes(orjson.dumps({**ECHO_CALL, "id": n + 1}), session) for n in range(connections)]
    check = await exchange(state, opened, calls)
    assert all(b'"hi"' in answer for answer in check), check[0]
    writes = sum(len(transport.writes) for _, transport in opened) / connections
    best = float("inf")
    passes = max(1, requests // connections)
    for _ in range(rounds):
        started = time.thread_time()
        for _ in range(passes):
            await exchange(state, opened, calls)
        best = min(best, (time.thread_time() - started) / (passes * connections))
    for protocol, _ in opened:
        protocol.connection_lost(None)
    return best * 1e6, writes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", choices=["hexmcp", "floor", "ceiling"], default="hexmcp")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--requests", type=int, default=6400)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from hexmcp.core.log import configure_logging

    configure_logging("warning", json_output=True)  # as the benchmark servers run
    figure, writes = uvloop.run(measure(args.app, args.connections, args.requests, args.rounds))
    print(f"{args.app} c={args.connections}: {figure:.1f} µs thread CPU per request through uvicorn's protocol "
          f"(best of {args.rounds} x {args.requests}), {writes:g} writes per response")
    return 0


if __name__ == "__main__":
    sys.exit(main())
