"""What the idle deadline adds to one mounted tool call (`Upstream.call`), in-process.

A mounted call is ended when the upstream sends nothing for it for `idle_timeout_s` (120 s by default;
0 turns it off): one `asyncio.timeout` scope per call, pushed back by each progress notification. This
measures its cost on the mount's own path with the wire taken out (the upstream client answers at once,
the same small result every time), so the difference is not drowned by a round trip's noise: rounds
alternate an upstream with the deadline off (the reference), on, and off again (the two references'
spread is the run's noise). Each round takes the process CPU time of `--calls` sequential calls; the
medians per call are printed with the deadline's ratio to the reference and its µs added.

    .venv/bin/python -m bench.upstream_idle_deadline [--rounds 15] [--calls 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from hexmcp.client import Target
from hexmcp.core import McpServer
from hexmcp.tools.upstreams.mount import IDLE_TIMEOUT_S, Upstream

RESULT = {"content": [{"type": "text", "text": "echo"}]}


class AnsweringClient:
    """The upstream client as the mount sees it, answering every request at once."""

    async def request(self, method: str, params: dict[str, Any], *, progress: Any = None) -> dict[str, Any]:
        return RESULT


class Context:
    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        pass


def upstream(idle_timeout_s: float) -> Upstream:
    mounted = Upstream(McpServer("bench", "1"), "kb", Target.parse("stdio:true"), idle_timeout_s=idle_timeout_s)
    mounted.client = AnsweringClient()  # type: ignore[assignment]
    mounted._ready.set()
    return mounted


async def round_us(mounted: Upstream, calls: int) -> float:
    ctx = Context()
    start = time.process_time()
    for _ in range(calls):
        await mounted.call("echo", {}, ctx)  # type: ignore[arg-type]
    return (time.process_time() - start) / calls * 1e6


async def measure(rounds: int, calls: int) -> dict[str, list[float]]:
    kinds = {"off (reference)": upstream(0), f"on ({IDLE_TIMEOUT_S:g} s)": upstream(IDLE_TIMEOUT_S),
             "off again": upstream(0)}
    figures: dict[str, list[float]] = {kind: [] for kind in kinds}
    for kind, mounted in kinds.items():  # warm-up
        await round_us(mounted, calls // 10)
    for _ in range(rounds):
        for kind, mounted in kinds.items():
            figures[kind].append(await round_us(mounted, calls))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args(argv)
    figures = asyncio.run(measure(args.rounds, args.calls))
    reference = statistics.median(figures["off (reference)"])
    print(f"mounted tools/call on the mount's path, wire taken out; {args.rounds} rounds x {args.calls} calls, "
          "median process CPU per call")
    for kind, values in figures.items():
        median = statistics.median(values)
        print(f"  idle deadline {kind:<18} {median:7.2f} µs  x{median / reference:.3f}  {median - reference:+.2f} µs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
