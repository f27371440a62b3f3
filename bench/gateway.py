"""Gateway benchmark: what hexmcp's routeCompletion adds over calling the upstream directly.

    python -m bench.gateway [--duration 5] [--rounds 3]      (needs wrk: apt-get install wrk)

Starts a minimal OpenAI-compatible upstream (`bench/servers/fake_openai.py`, a raw ASGI app under uvicorn
that answers at once) and `hexmcp serve --no-knowledge` pointed at it, each in its own process. Measuring
starts once hexmcp is warm (bench/warm.py: /health's `warm`, then its CPU time standing still). `wrk` (a C
load generator, so the client is never the bottleneck; bench/http.py's runner) then drives, at
concurrency 1 and 32, interleaved round by round so machine noise hits each alike:
- direct: `POST /v1/chat/completions` to the upstream (system + user message, as hexmcp sends);
- routeCompletion: `POST /mcp/tools/call` (REST dialect) to hexmcp, which classifies the prompt, routes,
  calls the same upstream over its pooled client and answers;
- classify_text: the classification alone over the same endpoint, to show its share of the added time.
Printed per level: req/s and p50 (medians of rounds), p99 (worst round), the added p50/p99
(routeCompletion minus direct), and the issue 17 target: added p50 < 3 ms, classification included.
"""

from __future__ import annotations

import argparse
import os
import sys

from bench.http import free_port, interleave, start, stop
from bench.warm import wait_warm

PROMPT = "What is the derivative of x squared times the sine of x?"
TARGET_ADDED_P50_MS = 3.0
LEVELS = (1, 32)
JSON = {"Content-Type": "application/json"}


def measure(duration: float, rounds: int) -> dict[str, dict[str, dict[str, float]]]:
    upstream_port, hexmcp_port = free_port(), free_port()
    upstream_url = f"http://127.0.0.1:{upstream_port}/v1"
    os.environ["GATEWAY_URL"] = upstream_url  # start() passes the environment on to hexmcp serve
    processes = []
    try:
        processes.append(start([sys.executable, "-m", "bench.servers.fake_openai", "--port", str(upstream_port)],
                               upstream_port))
        processes.append(start([sys.executable, "-m", "hexmcp.app.cli", "serve", "--port", str(hexmcp_port),
                                "--no-knowledge", "--max-connections-per-address", "1024"], hexmcp_port,
                               ready_path="/health", timeout_s=180))
        print(f"hexmcp warm {wait_warm(processes[-1].pid, f'http://127.0.0.1:{hexmcp_port}'):.1f} s after /health said ok")
        tools = f"http://127.0.0.1:{hexmcp_port}/mcp/tools/call"
        chat = {"model": "qwen3-32b", "messages": [{"role": "system", "content": "You are a careful mathematician."},
                                                   {"role": "user", "content": PROMPT}]}
        targets = {
            "direct": (f"{upstream_url}/chat/completions", chat, JSON),
            "routeCompletion": (tools, {"name": "routeCompletion", "arguments": {"prompt": PROMPT}}, JSON),
            "classify_text": (tools, {"name": "classify_text", "arguments": {"text": PROMPT}}, JSON),
        }
        return interleave(targets, LEVELS, duration, rounds)
    finally:
        for process in reversed(processes):
            stop(process)


def report(results: dict[str, dict[str, dict[str, float]]]) -> None:
    print(f"{'level':>6} {'arm':>16} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    for c in LEVELS:
        level = f"c{c}"
        for name in ("direct", "routeCompletion", "classify_text"):
            row = results[name][level]
            print(f"{level:>6} {name:>16} {row['rps']:>8.0f} {row['p50_ms']:>8.2f} {row['p99_ms']:>8.2f} "
                  f"{row['non2xx'] + row['errors']:>7.0f}")
        routed, direct = results["routeCompletion"][level], results["direct"][level]
        added50 = routed["p50_ms"] - direct["p50_ms"]
        added99 = routed["p99_ms"] - direct["p99_ms"]
        verdict = "meets" if added50 < TARGET_ADDED_P50_MS else "misses"
        print(f"{level:>6} {'added':>16} {'':>8} {added50:>8.2f} {added99:>8.2f}   ratio p50 "
              f"{routed['p50_ms'] / direct['p50_ms']:.2f}x; {verdict} the < {TARGET_ADDED_P50_MS:g} ms p50 target; "
              f"routeCompletion minus classify_text p50: {routed['p50_ms'] - results['classify_text'][level]['p50_ms']:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per arm, level and round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    report(measure(args.duration, args.rounds))


if __name__ == "__main__":
    main()
