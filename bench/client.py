"""Client benchmark: hexmcp.client vs the official SDK client, against the same hexmcp server.

    python -m bench.client [--calls 500] [--rounds 5] [--concurrency 1]

For each transport (stdio: bench/servers/hexmcp_echo.py; Streamable HTTP:
bench/servers/hexmcp_http_echo.py) one server stays up, and both clients take turns on it in
interleaved rounds (each round: one batch of `--calls` echo tool calls per client, `--concurrency` in
flight), so load from other processes on the machine hits both alike. Prints, per transport and client,
the median over rounds of calls/s, p50 latency and the client's own CPU time per call (all clients run
in this process, the servers outside it: the figure that moves least with the machine's load), and our
calls/s as a ratio to the SDK client's (the target of issue 18: at least 3x). Over stdio two more rows are floors, each on its own copy of the
same server (bench/stdio_floor.py), in the same rounds: a blocking write/readline loop (no event loop:
the floor of any client) and a bare asyncio add_reader/write loop (the floor of any asyncio client). Over HTTP three more rows are bare POST loops on a session
(bench/http_floors.py: httpx, under the SDK client; aiohttp, under ours; a raw keep-alive socket, the
floor of any client), measured in the same interleaved rounds. Last, the
mounted-tool overhead: p50 of the echo tool called over HTTP directly vs through `hexmcp serve
--upstream` mounting the same echo over HTTP, then over stdio, alternating call by call (target: under
1 ms added). Every figure is measured in this run; nothing is compared
with a number from elsewhere.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

from bench.http import free_port, start, stop
from bench.http_floors import FLOORS
from bench.stdio_floor import asyncio_pipe, blocking_pipe
from hexmcp.client import McpClient, Target

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
STDIO_SERVER = [PY, str(ROOT / "bench" / "servers" / "hexmcp_echo.py")]
HTTP_SERVER = [PY, str(ROOT / "bench" / "servers" / "hexmcp_http_echo.py")]
TARGET_RATIO = 3.0
MOUNT_TARGET_MS = 1.0  # issue 18: a mounted tool adds under 1 ms p50 over HTTP
Call = Callable[[str], Awaitable[Any]]


@contextlib.asynccontextmanager
async def hexmcp_client(target: Target) -> AsyncIterator[Call]:
    async with McpClient(target) as client:
        yield lambda text: client.call_tool("echo", {"text": text})


@contextlib.asynccontextmanager
async def sdk_client(target: Target) -> AsyncIterator[Call]:
    from mcp.client.session import ClientSession

    if target.command:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        streams = stdio_client(StdioServerParameters(command=target.command[0], args=list(target.command[1:])))
    else:
        from mcp.client.streamable_http import streamable_http_client

        streams = streamable_http_client(str(target.url))
    async with streams as (read, write, *_), ClientSession(read, write) as session:
        await session.initialize()
        yield lambda text: session.call_tool("echo", {"text": text})


async def batch(call: Call, calls: int, concurrency: int) -> tuple[float, float, float]:
    """(calls/s, p50 ms, this process's CPU µs per call) of `calls` echo calls with `concurrency` in flight.

    The CPU figure is the client's own cost: every client runs in this process, each alone during its
    batch, and the servers are other processes. It moves far less with the machine's load than wall time.
    """
    latencies: list[float] = []
    queue = iter(range(calls))

    async def worker() -> None:
        for index in queue:
            started = time.perf_counter()
            await call(f"message {index}")
            latencies.append(time.perf_counter() - started)

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return calls / elapsed, statistics.median(latencies) * 1000, cpu / calls * 1e6


async def compare(target: Target, calls: int, rounds: int, concurrency: int) -> dict[str, dict[str, float]]:
    figures: dict[str, list[tuple[float, float, float]]] = {"hexmcp": [], "sdk": []}
    async with contextlib.AsyncExitStack() as stack:
        clients = {"hexmcp": await stack.enter_async_context(hexmcp_client(target)),
                   "sdk": await stack.enter_async_context(sdk_client(target))}
        if target.url is not None:
            for name, floor in FLOORS.items():
                figures[name] = []
                clients[name] = await stack.enter_async_context(floor(str(target.url)))
        else:
            for name, floor in (("pipe", blocking_pipe), ("asyncio", asyncio_pipe)):
                figures[name] = []
                clients[name] = await stack.enter_async_context(floor(target.command))
        for call in clients.values():
            await batch(call, min(calls, 50), concurrency)  # warm-up: imports, JIT-free but cache-warm paths
        for _ in range(rounds):
            for name, call in clients.items():
                figures[name].append(await batch(call, calls, concurrency))
    return {name: {"calls_s": statistics.median(r for r, _, _ in runs), "p50_ms": statistics.median(p for _, p, _ in runs),
                   "cpu_us": statistics.median(c for _, _, c in runs)} for name, runs in figures.items()}


@contextlib.contextmanager
def http_server() -> Any:
    port = free_port()
    process = start([*HTTP_SERVER, "--port", str(port)], port)
    try:
        yield Target.parse(f"http://127.0.0.1:{port}/mcp")
    finally:
        stop(process)


@contextlib.contextmanager
def gateway(upstream: Target) -> Any:
    """`hexmcp serve --upstream echo=<upstream>`: the echo tool mounted as `echo__echo`."""
    port = free_port()
    process = start([PY, "-m", "hexmcp.app.cli", "serve", "--port", str(port), "--no-classifier", "--no-knowledge",
                     "--log-level", "warning", "--upstream", f"echo={upstream}"], port)
    try:
        yield Target.parse(f"http://127.0.0.1:{port}/mcp")
    finally:
        stop(process)


async def mounted_overhead(direct: Target, mounted: Target, calls: int, rounds: int) -> dict[str, float]:
    """Median over rounds of the p50 of the echo tool called directly and through the gateway.

    Within a round the two alternate call by call, so a burst of load from elsewhere on the machine
    falls on both alike (batch after batch, one batch could catch a burst the other missed).
    """
    direct_p50: list[float] = []
    mounted_p50: list[float] = []
    async with McpClient(direct) as straight, McpClient(mounted) as through:
        for _ in range(200):  # the gateway mounts its upstream in the background after start-up
            if "echo__echo" in {tool.name for tool in await through.all_tools()}:
                break
            await asyncio.sleep(0.05)
        routes = [lambda text: straight.call_tool("echo", {"text": text}),
                  lambda text: through.call_tool("echo__echo", {"text": text})]
        for round_ in range(rounds + 1):  # round 0 warms up both paths and is not counted
            latencies: list[list[float]] = [[], []]
            for index in range(calls if round_ else 50):
                for route, kept in zip(routes, latencies):
                    started = time.perf_counter()
                    await route(f"message {index}")
                    kept.append(time.perf_counter() - started)
            if round_:
                direct_p50.append(statistics.median(latencies[0]) * 1000)
                mounted_p50.append(statistics.median(latencies[1]) * 1000)
    return {"direct_p50_ms": statistics.median(direct_p50), "mounted_p50_ms": statistics.median(mounted_p50)}


def report(transport: str, figures: dict[str, dict[str, float]]) -> None:
    ours, theirs = figures["hexmcp"], figures["sdk"]
    ratio = ours["calls_s"] / theirs["calls_s"]
    for name, row in figures.items():
        print(f"{transport:5} {name:7} {row['calls_s']:9.0f} calls/s   p50 {row['p50_ms']:7.3f} ms   "
              f"client CPU {row['cpu_us']:7.1f} µs/call")
    verdict = "meets" if ratio >= TARGET_RATIO else "misses"
    print(f"{transport:5} ratio   {ratio:9.2f}x the SDK client's calls/s ({verdict} the {TARGET_RATIO:.0f}x target); "
          f"p50 {theirs['p50_ms'] / ours['p50_ms']:.2f}x, client CPU {theirs['cpu_us'] / ours['cpu_us']:.2f}x less")
    floors = {**{name: f"bare {name} POST loop" for name in FLOORS},
              "pipe": "blocking write/readline loop", "asyncio": "bare asyncio add_reader/write loop"}
    for floor, what in floors.items():
        if floor in figures:
            print(f"{transport:5} floor   {ours['calls_s'] / figures[floor]['calls_s']:9.2f}x a {what}'s calls/s"
                  f" (that loop: {figures[floor]['calls_s'] / theirs['calls_s']:.2f}x the SDK client's)")


def run(work: Awaitable[Any], loop: str) -> Any:
    """Both clients run on the same event loop in a comparison: asyncio's own, or uvloop."""
    factory = None
    if loop == "uvloop":
        import uvloop

        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(work)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--transport", choices=["stdio", "http", "both"], default="both")
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio",
                        help="the clients' event loop (the same for both)")
    args = parser.parse_args(argv)
    print(f"echo tool calls: {args.calls} per batch, {args.rounds} interleaved rounds, "
          f"{args.concurrency} in flight, {args.loop} loop; medians over rounds")
    if args.transport in ("stdio", "both"):
        report("stdio", run(compare(Target.stdio(shlex.join(STDIO_SERVER)), args.calls, args.rounds,
                                     args.concurrency), args.loop))
    if args.transport in ("http", "both"):
        with http_server() as target:
            report("http", run(compare(target, args.calls, args.rounds, args.concurrency), args.loop))
            for upstream in (target, Target.stdio(shlex.join(STDIO_SERVER))):
                with gateway(upstream) as mounted:
                    figures = run(mounted_overhead(target, mounted, args.calls, args.rounds), args.loop)
                added = figures["mounted_p50_ms"] - figures["direct_p50_ms"]
                print(f"mount ({upstream.transport.value} upstream) direct p50 {figures['direct_p50_ms']:.3f} ms, "
                      f"through `hexmcp serve --upstream` {figures['mounted_p50_ms']:.3f} ms: {added:+.3f} ms added "
                      f"({'meets' if added < MOUNT_TARGET_MS else 'misses'} the {MOUNT_TARGET_MS:.0f} ms target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
