"""Slowloris benchmark: /health latency for another client while one address trickles request heads.

    python bench/slowloris.py [--connections 1200] [--requests 200] [--head-timeout 10] [--json out.json]

`hexmcp serve --no-classifier` runs in a subprocess started under a soft open-files limit of 1,024
(the hard limit as the host has it; the server raises its soft limit at start-up). A client bound to
127.0.0.2 sends `--requests` sequential GET /health on one kept-alive connection, first with the
server quiet (the reference, same run), then while `--connections` connections from 127.0.0.1 trickle
a request head that never completes (`tests/support/slow_clients.py`). Reported: median and p99
latency of each phase and their ratios, how many slow connections were refused at the per-address
cap, and how long the admitted ones lived (the head deadline).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# Run as a script, bench/ heads sys.path and bench/http.py would shadow the standard library's `http`;
# the repository root goes there instead, for tests.support (the slow clients are shared with the tests).
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(ROOT)

import httpx  # noqa: E402

from tests.support.net import free_port  # noqa: E402
from tests.support.slow_clients import open_slow_heads  # noqa: E402

OTHER_CLIENT = "127.0.0.2"
SERVER_SOFT_LIMIT = 1024


def _p99(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[98]


async def _health_latencies(port: int, requests: int) -> list[float]:
    transport = httpx.AsyncHTTPTransport(local_address=OTHER_CLIENT)
    latencies = []
    async with httpx.AsyncClient(transport=transport, timeout=10) as client:
        for _ in range(requests):
            started = time.perf_counter()
            response = await client.get(f"http://127.0.0.1:{port}/health")
            latencies.append(time.perf_counter() - started)
            response.raise_for_status()
    return latencies


async def _measure(port: int, connections: int, requests: int) -> dict[str, Any]:
    quiet = await _health_latencies(port, requests)
    async with open_slow_heads("127.0.0.1", port, connections) as heads:
        attacked = await _health_latencies(port, requests)
        await heads.until_all_closed(timeout_s=120)
    refused = [head for head in heads.heads if head.answer]
    held = [head.lifetime_s for head in heads.heads if not head.answer]
    return {"quiet_ms": _summary(quiet), "attacked_ms": _summary(attacked),
            "median_ratio": statistics.median(attacked) / statistics.median(quiet),
            "p99_ratio": _p99(attacked) / _p99(quiet), "slow_connections": connections,
            "refused": len(refused), "held": len(held),
            "held_lifetime_s": {"min": min(held, default=0), "max": max(held, default=0)}}


def _summary(samples: list[float]) -> dict[str, float]:
    return {"median": statistics.median(samples) * 1000, "p99": _p99(samples) * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--connections", type=int, default=1200)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--head-timeout", type=float, default=10.0,
                        help="long enough for the attacked phase to run while the slow connections are held")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # this process holds every slow socket
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "hexmcp.app.cli", "serve", "--no-classifier", "--port", str(port),
         "--head-timeout", str(args.head_timeout), "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (min(SERVER_SOFT_LIMIT, hard), hard)))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.05)
        result = asyncio.run(_measure(port, args.connections, args.requests))
    finally:
        server.terminate()
        server.wait(timeout=20)
    quiet, attacked = result["quiet_ms"], result["attacked_ms"]
    print(f"/health from {OTHER_CLIENT}, {args.requests} requests per phase, server soft limit "
          f"{min(SERVER_SOFT_LIMIT, hard)} at start (hard {hard})")
    print(f"  quiet:                     median {quiet['median']:.2f} ms  p99 {quiet['p99']:.2f} ms")
    print(f"  {args.connections} slow heads from 127.0.0.1: median {attacked['median']:.2f} ms  "
          f"p99 {attacked['p99']:.2f} ms")
    print(f"  ratio attacked/quiet:      median {result['median_ratio']:.2f}  p99 {result['p99_ratio']:.2f}")
    print(f"  slow connections: {result['refused']} refused (503), {result['held']} held, closed after "
          f"{result['held_lifetime_s']['min']:.2f}-{result['held_lifetime_s']['max']:.2f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
