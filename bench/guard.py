"""What the audit trail and the rate limiter add to one tool call, in-process, on the core (ADR 0922, 0921).

Rounds alternate five servers with the same echo tool: no observer (the reference), the rate limiter
(one bucket per client, never refusing), the audit log appending to a file (rotation on, so the stat
per line is paid), both, and the reference again (their spread is the run's noise). Each round takes the CPU time (process time: the
shared machine's other load does not count) of `--calls` sequential tools/call through the core with no
wire; the medians of the per-call times are printed with their ratio to the reference measured in the
same run, and the audit line's own cost (record + encode + one os.write) timed alone: with the usual
arguments, with 30 KiB of arguments (kept whole since ADR 1131), and with --audit-fsync.

    .venv/bin/python -m bench.guard [--rounds 15] [--calls 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from hexmcp.adapters.audit import AuditFile, AuditLog, ClientIds, Redaction
from hexmcp.adapters.audit.record import encode_line, request_record
from hexmcp.adapters.limits import BucketRate, RateLimiter, RateLimits
from hexmcp.core import McpServer
from hexmcp.core.observation import ObservedOutcome, ObservedRequest
from tests.support.peer import CoreClient

ARGUMENTS = {"text": "Summarise the quarterly report for the board in three bullet points.", "api_key": "k"}


def _server(observers: list[Any]) -> McpServer:
    server = McpServer("bench", "1")

    @server.tool()
    async def echo(text: str, api_key: str = "") -> str:
        return text

    for observer in observers:
        server.add_observer(observer)
    return server


async def _per_call_us(server: McpServer, calls: int) -> float:
    client = CoreClient(server)
    await client.initialize()
    params = {"name": "echo", "arguments": ARGUMENTS}
    started = time.process_time()
    for _ in range(calls):
        await client.request("tools/call", params)
    return (time.process_time() - started) / calls * 1e6


REQUEST = ObservedRequest(method="tools/call", target="echo", arguments=ARGUMENTS,
                          params={"name": "echo", "arguments": ARGUMENTS}, meta={}, request_key=None,
                          session_id="s", client_id="c", trace_id="t", protocol_version="2025-06-18", transport="stdio")
BIG_ARGUMENTS = {"text": "x" * 30 * 1024}
BIG_REQUEST = ObservedRequest(method="tools/call", target="echo", arguments=BIG_ARGUMENTS,
                              params={"name": "echo", "arguments": BIG_ARGUMENTS}, meta={}, request_key=None,
                              session_id="s", client_id="c", trace_id="t", protocol_version="2025-06-18",
                              transport="stdio")
CLIENTS = ClientIds(b"bench-salt-0123456789abcdef")


def _check_us(limits: RateLimits, checks: int) -> float:
    limiter = RateLimiter(limits)
    started = time.process_time()
    for _ in range(checks):
        limiter.request_started(REQUEST)
    return (time.process_time() - started) / checks * 1e6


def _line_us(folder: Path, lines: int, request: ObservedRequest = REQUEST, fsync: bool = False) -> float:
    file = AuditFile(folder / "alone.log", max_bytes=64 * 1024 * 1024, fsync=fsync)
    outcome = ObservedOutcome(outcome="ok", error_code=None, event_id=None, duration_s=0.0001,
                              result={"content": [{"type": "text", "text": ARGUMENTS["text"]}], "isError": False})
    redaction = Redaction.with_defaults()
    started = time.process_time()
    for n in range(lines):
        file.append(encode_line(request_record(request, outcome, event_id=f"ev-{n}", redaction=redaction,
                                               clients=CLIENTS, versions={"model": "m", "index": "i"})))
    file.close()
    return (time.process_time() - started) / lines * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        limits = RateLimits(default=BucketRate(rate=1e9, burst=10**9))

        def audit(name: str) -> AuditLog:
            return AuditLog(AuditFile(Path(folder) / name, max_bytes=64 * 1024 * 1024), Redaction.with_defaults(),
                            lambda: {"model": "m", "index": "i"}, clients=CLIENTS)

        kinds = {"reference": lambda: [], "rate limit": lambda: [RateLimiter(limits)],
                 "audit": lambda: [audit("a.log")], "audit + rate limit": lambda: [audit("b.log"), RateLimiter(limits)],
                 "reference again": lambda: []}  # the spread between the two references is the noise floor
        times: dict[str, list[float]] = {kind: [] for kind in kinds}
        lines: list[float] = []
        big_lines: list[float] = []
        synced_lines: list[float] = []
        synced_wall: list[float] = []
        checks: list[float] = []
        for _ in range(args.rounds):
            for kind, observers in kinds.items():  # interleaved: machine noise hits every kind alike
                times[kind].append(asyncio.run(_per_call_us(_server(observers()), args.calls)))
            lines.append(_line_us(Path(folder), args.calls))
            big_lines.append(_line_us(Path(folder), args.calls // 4, BIG_REQUEST))
            wall = time.perf_counter()
            synced_lines.append(_line_us(Path(folder), args.calls // 10, fsync=True))
            synced_wall.append((time.perf_counter() - wall) / (args.calls // 10) * 1e6)
            checks.append(_check_us(limits, args.calls * 10))
        reference = statistics.median(times["reference"])
        for kind, samples in times.items():
            median = statistics.median(samples)
            print(f"{kind:>20}: {median:7.1f} us CPU/call  ({median / reference:.2f}x reference, "
                  f"+{median - reference:.1f} us)")
        print(f"{'rate check alone':>20}: {statistics.median(checks):7.2f} us CPU/check")
        print(f"{'audit line alone':>20}: {statistics.median(lines):7.1f} us CPU/line (record, encode, write, stat)")
        print(f"{'30 KiB arguments':>20}: {statistics.median(big_lines):7.1f} us CPU/line (kept whole)")
        print(f"{'with --audit-fsync':>20}: {statistics.median(synced_lines):7.1f} us CPU/line, "
              f"{statistics.median(synced_wall):7.1f} us wall/line")


if __name__ == "__main__":
    main()
