"""CPU cost of one gateway call in process: hexmcp's OpenAI-compatible client against bare HTTP clients.

    python -m bench.gateway_client_cost [--calls 300] [--rounds 5]

Starts `bench/servers/fake_openai.py` (answers at once) in its own process, then times, in this process,
thread CPU time per call (not wall time: the machine is shared and CPU time moves less with others' load)
of three arms, interleaved round by round:
- `hexmcp`: `OpenAICompatibleGateway.complete` (retry loop, size-limited read, error map, answer parsing);
- `aiohttp`: a bare `aiohttp.ClientSession.post` of the same body, body read and parsed (the floor of the
  HTTP client hexmcp uses; ADR 0704);
- `httpx`: a bare `httpx.AsyncClient.post` of the same body (the client the gateway used before ADR 0704).
Prints medians over rounds of CPU ms per call and wall ms per call, and hexmcp's share over the aiohttp floor.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from typing import Any, Awaitable, Callable

import aiohttp
import httpx
import orjson
import structlog

from bench.http import free_port, start, stop
from hexmcp.tools.gateway.outbound import GatewayConfig, RetryPolicy
from hexmcp.tools.gateway.outbound.openai_compatible import OpenAICompatibleGateway
from hexmcp.tools.gateway.port import ChatAnswer, ChatMessage, ChatRequest

REQUEST = ChatRequest(model="qwen3-32b", messages=(ChatMessage(role="system", content="You are a careful mathematician."),
                                                   ChatMessage(role="user", content="What is the derivative of x squared?")))
BODY = orjson.dumps({"model": REQUEST.model, "messages": [{"role": m.role, "content": m.content}
                                                          for m in REQUEST.messages]})
JSON = {"content-type": "application/json"}


async def measure(url: str, calls: int, rounds: int) -> dict[str, tuple[float, float]]:
    gateway = OpenAICompatibleGateway(GatewayConfig(url=url, retries=RetryPolicy(max_retries=0)))
    session = aiohttp.ClientSession()
    client = httpx.AsyncClient()

    async def hexmcp() -> None:
        assert isinstance(await gateway.complete(REQUEST), ChatAnswer)

    async def bare_aiohttp() -> None:
        async with session.post(url + "/chat/completions", data=BODY, headers=JSON) as response:
            orjson.loads(await response.read())

    async def bare_httpx() -> None:
        orjson.loads((await client.post(url + "/chat/completions", content=BODY, headers=JSON)).content)

    arms: dict[str, Callable[[], Awaitable[None]]] = {"hexmcp": hexmcp, "aiohttp": bare_aiohttp, "httpx": bare_httpx}
    try:
        per_call = await cost_per_call(arms, calls, rounds, warm=50)
    finally:
        await gateway.aclose()
        await session.close()
        await client.aclose()
    return {name: (cpu * 1000, wall * 1000) for name, (cpu, wall) in per_call.items()}


async def cost_per_call(arms: dict[str, Callable[[], Awaitable[None]]], calls: int, rounds: int,
                        warm: int, pause_s: float = 0.0) -> dict[str, tuple[float, float]]:
    """Seconds of this thread's CPU and of wall time per call of each arm: `warm` calls of each first
    (connections open, code paths run), then `rounds` rounds of `calls` calls, the arms interleaved round
    by round so that the machine's other work hits each alike; medians over rounds. `pause_s`: the loop
    sleeps that long before each call (not counted), as it waits on the classifier before a routed call."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in arms}
    for arm in arms.values():
        for _ in range(warm):
            await arm()
    for _ in range(rounds):
        for name, arm in arms.items():
            if pause_s:
                cpu_s = wall_s = 0.0
                for _ in range(calls):
                    await asyncio.sleep(pause_s)
                    cpu, wall = time.thread_time(), time.perf_counter()
                    await arm()
                    cpu_s, wall_s = cpu_s + time.thread_time() - cpu, wall_s + time.perf_counter() - wall
                samples[name].append((cpu_s / calls, wall_s / calls))
                continue
            cpu, wall = time.thread_time(), time.perf_counter()
            for _ in range(calls):
                await arm()
            samples[name].append(((time.thread_time() - cpu) / calls, (time.perf_counter() - wall) / calls))
    return {name: (statistics.median(s[0] for s in runs), statistics.median(s[1] for s in runs))
            for name, runs in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per arm and round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))  # no per-call lines
    port = free_port()
    upstream = start([sys.executable, "-m", "bench.servers.fake_openai", "--port", str(port)], port)
    try:
        results: dict[str, Any] = asyncio.run(measure(f"http://127.0.0.1:{port}/v1", args.calls, args.rounds))
    finally:
        stop(upstream)
    print(f"{'arm':<10} {'CPU ms/call':>12} {'wall ms/call':>13}")
    for name, (cpu, wall) in results.items():
        print(f"{name:<10} {cpu:>12.3f} {wall:>13.3f}")
    floor = results["aiohttp"][0]
    print(f"hexmcp over the bare aiohttp floor: +{results['hexmcp'][0] - floor:.3f} ms CPU per call "
          f"({results['hexmcp'][0] / floor:.2f}x); bare httpx / bare aiohttp: {results['httpx'][0] / floor:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
