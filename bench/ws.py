"""WebSocket benchmark: many concurrent sockets, and one socket with many requests in flight.

    python -m bench.ws              # 500 connections x 20 calls, then 64 pipelined on one socket
    python -m bench.ws --quick      # 100 x 10
    python -m bench.ws --serve PORT # just the server (what the benchmark runs in a subprocess)

The server is `hexmcp.adapters.ws` in a plain Starlette app under uvicorn, with one trivial `echo`
tool (bench/servers/hexmcp_echo.py), in its own process so its RSS can be read from /proc (VmRSS now,
VmHWM the peak). The client is the `websockets` library speaking the ChatGPT dialect, in this process;
on a 2-core machine client and server share the CPUs, so throughput is a floor, not a ceiling.
Measured per tools/call: round-trip latency (p50, p99) and calls/s over the whole run. Any error
(an error frame, a wrong answer, a dropped socket) is counted, and the run fails unless there are none.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs

from bench.stats import percentile

REPO_ROOT = Path(__file__).resolve().parents[1]
PROTOCOL_VERSION = "2025-11-25"


# --- the server (subprocess) ------------------------------------------------------------------------

def serve(port: int, max_connections: int) -> int:
    from starlette.applications import Starlette

    from hexmcp.adapters.ws import WsConfig, make_server, websocket_route
    from hexmcp.core.log import configure_logging

    from .servers.hexmcp_echo import build

    configure_logging("warning", json_output=True)  # per-request info logs would be part of what we time
    raise_fd_limit()
    config = WsConfig(max_connections=max_connections)
    route = websocket_route(build(), config)
    server = make_server(Starlette(routes=[route]), route.endpoint, port=port, log_level="warning",
                         backlog=4096)
    server.run()
    return 0


# --- the client ------------------------------------------------------------------------------------

@attrs.define
class Tally:
    latencies: list[float] = attrs.Factory(list)
    errors: list[str] = attrs.Factory(list)


def raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def memory_kib(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


async def open_session(url: str, compression: str | None) -> Any:
    from websockets.asyncio.client import connect

    ws = await connect(url, open_timeout=60, ping_interval=None, compression=compression)
    await ws.send(json.dumps({"id": 0, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}))
    answer = json.loads(await ws.recv())
    if "result" not in answer:
        raise RuntimeError(f"initialize failed: {answer}")
    await ws.send(json.dumps({"method": "notifications/initialized"}))
    return ws


def echo(request_id: int, text: str) -> str:
    return json.dumps({"id": request_id, "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"text": text}}})


def check(answer: dict[str, Any], request_id: int, text: str) -> str | None:
    if answer.get("id") != request_id:
        return f"answer to {answer.get('id')!r}, expected {request_id}"
    if "error" in answer:
        return f"error {answer['error'].get('code')}: {answer['error'].get('message')}"
    if answer["result"]["content"][0]["text"] != text:
        return "wrong echo"
    return None


@attrs.define
class Gate:
    """Every socket opens and initializes before the clock starts: we time calls, not handshakes."""

    expected: int
    arrived: int = 0
    all_arrived: asyncio.Event = attrs.Factory(asyncio.Event)
    start: asyncio.Event = attrs.Factory(asyncio.Event)

    def arrive(self) -> None:
        self.arrived += 1
        if self.arrived == self.expected:
            self.all_arrived.set()


async def one_client(url: str, n: int, calls: int, tally: Tally, gate: Gate, compression: str | None) -> None:
    try:
        ws = await open_session(url, compression)
    except Exception as exc:
        tally.errors.append(f"connect: {exc!r}")
        gate.arrive()
        return
    gate.arrive()
    try:
        await gate.start.wait()
        for i in range(1, calls + 1):
            text = f"c{n}-{i}"
            started = time.perf_counter()
            await ws.send(echo(i, text))
            answer = json.loads(await ws.recv())
            tally.latencies.append(time.perf_counter() - started)
            if problem := check(answer, i, text):
                tally.errors.append(problem)
    except Exception as exc:
        tally.errors.append(f"socket: {exc!r}")
    finally:
        await ws.close()


async def many_connections(url: str, connections: int, calls: int,
                           compression: str | None) -> tuple[Tally, float, float]:
    tally = Tally()
    gate = Gate(connections)
    opening = time.perf_counter()
    tasks = [asyncio.ensure_future(one_client(url, n, calls, tally, gate, compression)) for n in range(connections)]
    await gate.all_arrived.wait()
    opened = time.perf_counter() - opening
    began = time.perf_counter()
    gate.start.set()
    await asyncio.gather(*tasks)
    return tally, time.perf_counter() - began, opened


async def pipelined(url: str, window: int, rounds: int, compression: str | None) -> tuple[Tally, float]:
    tally = Tally()
    ws = await open_session(url, compression)
    began = time.perf_counter()
    next_id = 1
    try:
        for _ in range(rounds):
            sent: dict[int, tuple[str, float]] = {}
            for _ in range(window):
                text = f"p{next_id}"
                sent[next_id] = (text, time.perf_counter())
                await ws.send(echo(next_id, text))
                next_id += 1
            while sent:
                answer = json.loads(await ws.recv())
                text, started = sent.pop(answer.get("id"), (None, 0.0))
                if text is None:
                    tally.errors.append(f"unexpected answer {answer.get('id')!r}")
                    continue
                tally.latencies.append(time.perf_counter() - started)
                if problem := check(answer, answer["id"], text):
                    tally.errors.append(problem)
    finally:
        await ws.close()
    return tally, time.perf_counter() - began


def report(name: str, tally: Tally, seconds: float) -> None:
    calls = len(tally.latencies)
    print(f"{name}: {calls} calls in {seconds:.2f} s = {calls / seconds:,.0f} calls/s; "
          f"p50 {percentile(tally.latencies, 50) * 1000:.2f} ms, p99 {percentile(tally.latencies, 99) * 1000:.2f} ms; "
          f"errors {len(tally.errors)}")
    for problem in sorted(set(tally.errors))[:5]:
        print(f"  error: {problem}")


async def run(args: argparse.Namespace) -> int:
    raise_fd_limit()
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "bench.ws", "--serve", str(port),
                               "--max-connections", str(args.connections + 16)], cwd=REPO_ROOT)
    url = f"ws://127.0.0.1:{port}/ws"
    try:
        await wait_for_port(port, server)
        idle = memory_kib(server.pid)
        tally, seconds, opened = await many_connections(url, args.connections, args.calls, args.compression)
        after = memory_kib(server.pid)
        print(f"server RSS idle {idle['VmRSS'] / 1024:.1f} MiB; peak (VmHWM) {after['VmHWM'] / 1024:.1f} MiB; "
              f"after the run {after['VmRSS'] / 1024:.1f} MiB")
        print(f"{args.connections} sockets opened and initialized in {opened:.2f} s")
        report(f"{args.connections} connections x {args.calls} tools/call", tally, seconds)
        ptally, pseconds = await pipelined(url, args.window, args.rounds, args.compression)
        report(f"1 connection, {args.window} pipelined x {args.rounds} rounds", ptally, pseconds)
        return 0 if not tally.errors and not ptally.errors else 1
    finally:
        server.terminate()
        server.wait(timeout=30)


async def wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the benchmark server exited")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise RuntimeError("the benchmark server did not start")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100 connections x 10 calls")
    parser.add_argument("--connections", type=int, help="concurrent sockets (default 500, quick 100)")
    parser.add_argument("--calls", type=int, help="sequential tools/call per socket (default 20, quick 10)")
    parser.add_argument("--window", type=int, default=64, help="requests in flight on the pipelined socket")
    parser.add_argument("--rounds", type=int, default=50, help="pipelined windows to send")
    parser.add_argument("--no-compression", action="store_true", help="do not offer permessage-deflate")
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--max-connections", type=int, default=2048, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        return serve(args.serve, args.max_connections)
    # permessage-deflate is what browser-like clients offer, and the server accepts it by default.
    args.compression = None if args.no_compression else "deflate"
    args.connections = args.connections or (100 if args.quick else 500)
    args.calls = args.calls or (10 if args.quick else 20)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
