"""Soak: mixed traffic against real servers for a while; errors, p99 drift, memory and descriptors over time.

    python -m bench.soak                    # 600 s (the figure the issue asks for)
    python -m bench.soak --duration 120     # a shorter run
    python -m bench.soak --json             # the figures as JSON on stdout instead of the table

Servers: one `hexmcp serve` (classifier and knowledge base on) and one `hexmcp stdio` (spawned by the
client). Clients, all `hexmcp.client` in this process, `--concurrency` loops per transport: stdio,
Streamable HTTP with a session, Streamable HTTP stateless (2026-07-28), the REST dialect, WebSocket.
Each loop picks an operation at random (seeded): classify_text, list_categories, search, fetch (of a hit),
tools/list, or bad input — a missing argument, an unknown tool, an oversize text — and, over raw HTTP, a
body that is not JSON. Bad input must fail with its expected error; good input must succeed: anything
else is an unexpected error.

Reported: operations and errors (expected, unexpected, with the first few unexpected ones), latency p50
and p99 over the first and the last window after warm-up and their ratio (drift), each server's RSS
after warm-up and at the end (growth: target < 10 %) and its open descriptors over time. Exit status 1
when there is an unexpected error or the RSS growth target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import httpx

from hexmcp.client import ClientError, McpClient
from hexmcp.client.target import Target

from .http import free_port, stop

ROOT = Path(__file__).resolve().parents[1]
TRANSPORTS = ("stdio", "http", "http-stateless", "rest", "ws")
RSS_GROWTH_TARGET = 0.10
PROMPTS = ("Write a Python function that merges two sorted lists", "What is the capital of Australia?",
           "Prove that the square root of 2 is irrational", "Translate 'good morning' into French",
           "Summarise the causes of the First World War", "How do I reset a forgotten router password?",
           "Explain the difference between TCP and UDP", "Is this contract clause enforceable in court?")
QUERIES = ("how does the server drain on SIGTERM", "stdio wire guard", "embedding model int8",
           "connection admission caps", "knowledge hybrid retrieval", "error model")

Op = Callable[[McpClient, random.Random], Awaitable[None]]


class Expected(Exception):
    """Bad input failed the way it should."""


async def classify(client: McpClient, rng: random.Random) -> None:
    await _ok(client.call_tool("classify_text", {"text": rng.choice(PROMPTS)}))


async def list_categories(client: McpClient, rng: random.Random) -> None:
    await _ok(client.call_tool("list_categories", {}))


async def search_then_fetch(client: McpClient, rng: random.Random) -> None:
    found = await _ok(client.call_tool("search", {"query": rng.choice(QUERIES)}))
    results = (found.structured_content or {}).get("results") or []
    if results:
        await _ok(client.call_tool("fetch", {"id": results[0]["id"]}))


async def list_tools(client: McpClient, rng: random.Random) -> None:
    await client.list_tools()


async def bad_missing_argument(client: McpClient, rng: random.Random) -> None:
    await _refused(client.call_tool("classify_text", {}))


async def bad_unknown_tool(client: McpClient, rng: random.Random) -> None:
    await _refused(client.call_tool("no_such_tool", {}))


async def bad_oversize_text(client: McpClient, rng: random.Random) -> None:
    await _refused(client.call_tool("classify_text", {"text": "x" * 30_000}))


GOOD: dict[str, Op] = {"classify_text": classify, "list_categories": list_categories, "search+fetch": search_then_fetch,
                       "tools/list": list_tools}
BAD: dict[str, Op] = {"bad:missing-argument": bad_missing_argument, "bad:unknown-tool": bad_unknown_tool,
                      "bad:oversize-text": bad_oversize_text}
BAD_SHARE = 0.1


async def _ok(call: Awaitable[Any]) -> Any:
    result = await call
    if getattr(result, "is_error", False):
        raise RuntimeError(f"tool error: {result.content[0].text if result.content else ''}")
    return result


async def _refused(call: Awaitable[Any]) -> None:
    try:
        result = await call
    except ClientError as error:
        if error.rpc_code is not None:  # a protocol error, as bad input should get
            raise Expected() from None
        raise
    if getattr(result, "is_error", False):
        raise Expected()  # a tool error naming what was wrong is as good
    raise RuntimeError("bad input was accepted")


class Recorder:
    def __init__(self) -> None:
        self.samples: list[tuple[float, str, str, float]] = []  # (time, transport, op, ms)
        self.expected = 0
        self.unexpected: list[str] = []

    async def timed(self, transport: str, name: str, work: Awaitable[None]) -> None:
        started = time.perf_counter()
        try:
            await work
        except Expected:
            self.expected += 1
            return
        except Exception as error:  # every failure is a figure of the run, never a crash of it
            self.unexpected.append(f"{transport} {name}: {type(error).__name__}: {error}"[:300])
            return
        self.samples.append((time.monotonic(), transport, name, (time.perf_counter() - started) * 1000))


def target_for(transport: str, base: str, serve_argv: list[str]) -> tuple[Target, dict[str, Any]]:
    if transport == "stdio":
        return Target.stdio(" ".join([sys.executable, "-m", "hexmcp.app.cli", "stdio", *serve_argv])), {}
    if transport == "rest":
        return Target.rest(f"{base}/mcp"), {}
    if transport == "ws":
        return Target.parse(f"ws://{base.removeprefix('http://')}/ws"), {}
    options = {"protocol_version": "2026-07-28"} if transport == "http-stateless" else {}
    return Target.parse(f"{base}/mcp"), options


async def client_loop(client: McpClient, transport: str, rng: random.Random, recorder: Recorder, until: float) -> None:
    while time.monotonic() < until:
        name, op = rng.choice(list(BAD.items()) if rng.random() < BAD_SHARE else list(GOOD.items()))
        await recorder.timed(transport, name, op(client, rng))


async def raw_bad_json_loop(base: str, recorder: Recorder, until: float) -> None:
    """Bodies that are not JSON, over plain HTTP: each must get 400 and a parse error, nothing else."""
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        while time.monotonic() < until:
            async def bad_body() -> None:
                response = await http.post("/mcp", content=b"{not json", headers={
                    "content-type": "application/json", "accept": "application/json, text/event-stream"})
                if response.status_code == 400 and response.json()["error"]["code"] == -32700:
                    raise Expected()
                raise RuntimeError(f"non-JSON body answered {response.status_code}")
            await recorder.timed("http-raw", "bad:not-json", bad_body())
            await asyncio.sleep(0.5)


def process_figures(pid: int) -> tuple[int, int] | None:
    """(RSS in KiB, open descriptors) of a process, or None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        rss = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
        return rss, len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, StopIteration):
        return None


def server_pids(serve_pid: int) -> dict[str, int]:
    """The serve process and the stdio server (a child of this process running `hexmcp.app.cli stdio`)."""
    pids = {"serve": serve_pid}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == os.getpid() and b"stdio" in cmdline and int(entry.name) != serve_pid:
                pids["stdio"] = int(entry.name)
    return pids


async def sampler(pids: Callable[[], dict[str, int]], every_s: float, until: float,
                  series: dict[str, list[tuple[float, int, int]]]) -> None:
    while time.monotonic() < until:
        now = time.monotonic()
        for name, pid in pids().items():
            figures = process_figures(pid)
            if figures is not None:
                series.setdefault(name, []).append((now, *figures))
        await asyncio.sleep(every_s)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def summarise(recorder: Recorder, series: dict[str, list[tuple[float, int, int]]], started: float,
              warmup_s: float, window_s: float, ended: float) -> dict[str, Any]:
    steady = started + warmup_s
    first = [ms for t, _, _, ms in recorder.samples if steady <= t < steady + window_s]
    last = [ms for t, _, _, ms in recorder.samples if t >= ended - window_s]
    memory = {}
    for name, points in series.items():
        after = [p for p in points if p[0] >= steady] or points
        base, end = after[0], after[-1]
        memory[name] = {"rss_mib_after_warmup": round(base[1] / 1024, 1), "rss_mib_end": round(end[1] / 1024, 1),
                        "rss_mib_peak": round(max(p[1] for p in after) / 1024, 1),
                        "rss_growth": round((end[1] - base[1]) / base[1], 4),
                        "fds_after_warmup": base[2], "fds_end": end[2], "fds_max": max(p[2] for p in after)}
    p99_first, p99_last = percentile(first, 0.99), percentile(last, 0.99)
    by_op: dict[str, list[float]] = {}
    for _, transport, name, ms in recorder.samples:
        by_op.setdefault(f"{transport} {name}", []).append(ms)
    return {
        "duration_s": round(ended - started, 1), "warmup_s": warmup_s, "window_s": window_s,
        "operations": len(recorder.samples) + recorder.expected + len(recorder.unexpected),
        "expected_errors": recorder.expected, "unexpected_errors": len(recorder.unexpected),
        "unexpected_examples": recorder.unexpected[:10],
        "latency_ms": {"p50_first": round(percentile(first, 0.5), 2), "p99_first": round(p99_first, 2),
                       "p50_last": round(percentile(last, 0.5), 2), "p99_last": round(p99_last, 2),
                       "p99_drift": round(p99_last / p99_first, 3) if first and last else None},
        "per_operation_p50_ms": {key: round(percentile(values, 0.5), 2) for key, values in sorted(by_op.items())},
        "processes": memory,
        "fd_series": {name: [points[i][2] for i in range(0, len(points), max(1, len(points) // 12))]
                      for name, points in series.items()},
    }


def start_server(argv: list[str], port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:  # a file, never a pipe: an unread pipe would stall a long run
        process = subprocess.Popen([sys.executable, "-m", "hexmcp.app.cli", "serve", *argv, "--port", str(port)],
                                   cwd=ROOT, stdout=subprocess.DEVNULL, stderr=sink,
                                   env={**os.environ, "HEXMCP_LOG_LEVEL": "warning"})
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"hexmcp serve exited {process.returncode}; see {log}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    process.kill()
    raise RuntimeError("hexmcp serve did not become healthy in 300 s")


async def soak(args: argparse.Namespace, base: str, serve_pid: int) -> dict[str, Any]:
    recorder, series = Recorder(), {}
    clients = []
    for transport in TRANSPORTS:
        target, options = target_for(transport, base, [])
        client = McpClient(target, timeout=60, **options)
        await client.__aenter__()
        clients.append((transport, client))
    await asyncio.sleep(1)  # the stdio server's model loads in the background; calls wait for it
    started = time.monotonic()
    until = started + args.duration
    pids = server_pids(serve_pid)
    rng = random.Random(args.seed)
    work = [client_loop(client, transport, random.Random(rng.random()), recorder, until)
            for transport, client in clients for _ in range(args.concurrency)]
    await asyncio.gather(sampler(lambda: pids, args.sample_every, until, series), raw_bad_json_loop(base, recorder, until),
                         *work)
    ended = time.monotonic()
    for _, client in clients:
        await client.__aexit__(None, None, None)
    warmup = args.warmup if args.warmup is not None else min(60.0, args.duration / 5)
    return summarise(recorder, series, started, warmup, args.window or max(10.0, args.duration / 10), ended)


def report(figures: dict[str, Any]) -> None:
    latency = figures["latency_ms"]
    print(f"soak: {figures['duration_s']} s, {figures['operations']} operations, "
          f"warm-up {figures['warmup_s']} s, windows of {figures['window_s']} s")
    print(f"  errors: {figures['expected_errors']} expected (bad input), {figures['unexpected_errors']} unexpected")
    for example in figures["unexpected_examples"]:
        print(f"    {example}")
    print(f"  latency ms    p50 first {latency['p50_first']:>8}  p99 first {latency['p99_first']:>8}")
    print(f"                p50 last  {latency['p50_last']:>8}  p99 last  {latency['p99_last']:>8}  "
          f"p99 drift x{latency['p99_drift']}")
    print(f"  {'process':<8}{'RSS after warm-up':>19}{'end':>9}{'peak':>9}{'growth':>9}{'fds':>6}{'fds end':>9}{'fds max':>9}")
    for name, m in figures["processes"].items():
        print(f"  {name:<8}{m['rss_mib_after_warmup']:>15} MiB{m['rss_mib_end']:>9}{m['rss_mib_peak']:>9}"
              f"{m['rss_growth'] * 100:>8.1f}%{m['fds_after_warmup']:>6}{m['fds_end']:>9}{m['fds_max']:>9}")
    for name, fds in figures["fd_series"].items():
        print(f"  {name} descriptors over time: {' '.join(map(str, fds))}")
    for key, p50 in figures["per_operation_p50_ms"].items():
        print(f"    {key:<36} p50 {p50:>9} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=600.0, help="seconds of traffic (default 600)")
    parser.add_argument("--warmup", type=float, default=None, help="seconds before the baseline (default: a fifth, at most 60)")
    parser.add_argument("--window", type=float, default=None, help="seconds of each p99 window (default: a tenth, at least 10)")
    parser.add_argument("--concurrency", type=int, default=2, help="loops per transport (default 2)")
    parser.add_argument("--sample-every", type=float, default=5.0, help="seconds between RSS/descriptor samples")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of the table")
    args = parser.parse_args(argv)
    port = free_port()
    log = ROOT / ".bench-results" / "soak-serve.log"
    log.parent.mkdir(exist_ok=True)
    server = start_server([], port, log)
    try:
        figures = asyncio.run(soak(args, f"http://127.0.0.1:{port}", server.pid))
    finally:
        stop(server)
    print(json.dumps(figures, indent=2)) if args.json else report(figures)
    grew = any(m["rss_growth"] >= RSS_GROWTH_TARGET for m in figures["processes"].values())
    return 1 if figures["unexpected_errors"] or grew else 0


if __name__ == "__main__":
    sys.exit(main())
