"""The HTTP app's own work per request, in process: no socket, no uvicorn, no load generator.

    python -m bench.http_inprocess [--app hexmcp|floor|ceiling] [--path mcp|rest] [--requests N] [--rounds R]

Drives one ASGI app with the scope, `receive` and `send` uvicorn would give it (through hexmcp's own
protocol, so the scope carries the `HttpRequest` uvicorn_fence makes), one task per request as uvicorn runs
them, and prints the thread CPU time per request (best of the rounds). `hexmcp` is the `hexmcp serve`
app with the echo tool of `bench/servers/hexmcp_http_echo.py`; `floor` and `ceiling` are the apps of
`core_asgi_floor.py` and `raw_asgi_echo.py`. `--path rest` posts to the REST dialect (hexmcp only).

On a shared machine, count instructions instead of time (docs/adr/0211): under
`valgrind --tool=callgrind --callgrind-out-file=/dev/null`, run `--rounds 1` with two request counts
(e.g. 200 and 1,200) and divide the difference of the two "Collected" totals by the difference of the
counts; start-up cancels out, and the figure does not move with the load.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import uvloop

from hexmcp.adapters.http import HttpConfig, create_app

try:
    from hexmcp.adapters.http.request import NOT_TAKEN, REQUEST, HttpRequest
except ImportError:  # an older checkout (measured against this one, A/B): the fence's loose scope keys
    NOT_TAKEN = REQUEST = HttpRequest = None  # type: ignore[assignment,misc]

SERVERS = Path(__file__).resolve().parent / "servers"
HEADERS = [(b"host", b"127.0.0.1:8090"), (b"user-agent", b"wrk"), (b"content-type", b"application/json"),
           (b"accept", b"application/json, text/event-stream")]
VERSION = b"2025-11-25"


def load_app(name: str) -> Any:
    sys.path.insert(0, str(SERVERS))  # the bench servers import each other as scripts do
    if name == "ceiling":
        from raw_asgi_echo import app
        return app
    if name == "floor":
        from core_asgi_floor import app
        return app
    from hexmcp_http_echo import server
    return create_app(server, HttpConfig())


async def call(app: Any, path: str, headers: list[tuple[bytes, bytes]], body: bytes,
               loop: asyncio.AbstractEventLoop | None = None) -> list[dict[str, Any]]:
    """One request as uvicorn hands it over: the whole body at once, then (never reached) a disconnect.
    `loop`: the running loop, which the fence puts in the scope (given, so the harness does not pay a
    lookup per request that uvicorn does not pay)."""
    scope: dict[str, Any] = {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
        "server": ("127.0.0.1", 8090), "client": ("127.0.0.1", 50000), "scheme": "http", "method": "POST",
        "root_path": "", "path": path, "raw_path": path.encode(), "query_string": b"", "headers": headers,
        "state": {}}
    loop = loop or asyncio.get_running_loop()
    if HttpRequest is not None:
        scope[REQUEST] = HttpRequest(NOT_TAKEN, loop, True, True, True)  # as the fence makes it, body arrived
    else:
        scope.update({"hexmcp.kept_alive": True, "hexmcp.client_gone": None, "hexmcp.loop": loop,
                      "hexmcp.body_arrived": True})
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


async def session_headers(app: Any) -> list[tuple[bytes, bytes]]:
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"protocolVersion": VERSION.decode(), "capabilities": {},
                             "clientInfo": {"name": "bench", "version": "1"}}}
    sent = await call(app, "/mcp", HEADERS, orjson.dumps(initialize))
    session = dict(sent[0]["headers"]).get(b"mcp-session-id")
    headers = [*HEADERS, (b"mcp-protocol-version", VERSION)] + ([(b"mcp-session-id", session)] if session else [])
    await call(app, "/mcp", headers, orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    return headers


def bodies(path: str, count: int) -> list[bytes]:
    if path == "rest":
        return [orjson.dumps({"name": "echo", "arguments": {"text": "hi"}})] * count
    return [orjson.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                          "params": {"name": "echo", "arguments": {"text": "hi"}}}) for i in range(count)]


async def measure(app_name: str, path: str, requests: int, rounds: int) -> float:
    app = load_app(app_name)
    headers = await session_headers(app)
    url = "/mcp/tools/call" if path == "rest" else "/mcp"
    if path == "rest":
        headers = HEADERS
    loop = asyncio.get_running_loop()
    check = await call(app, url, headers, bodies(path, 1)[0])
    assert b'"hi"' in check[-1]["body"], check
    best = float("inf")
    for _ in range(rounds):
        batch = bodies(path, requests)
        started = time.thread_time()
        for body in batch:
            await loop.create_task(call(app, url, headers, body, loop))
        best = min(best, (time.thread_time() - started) / requests)
    return best * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", choices=["hexmcp", "floor", "ceiling"], default="hexmcp")
    parser.add_argument("--path", choices=["mcp", "rest"], default="mcp")
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.path == "rest" and args.app != "hexmcp":
        parser.error("--path rest is hexmcp's REST dialect")
    from hexmcp.core.log import configure_logging

    configure_logging("warning", json_output=True)  # as the benchmark servers run
    figure = uvloop.run(measure(args.app, args.path, args.requests, args.rounds))
    print(f"{args.app} {args.path}: {figure:.1f} µs thread CPU per request (best of {args.rounds} x {args.requests})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
