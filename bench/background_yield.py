"""The first minute of a server as a router meets it: foreground latency while the corpus indexes, against
the same server once idle, and indexing's own pace with and without that traffic (issue 31).

    python -m bench.background_yield [--docs bench/data/corpora/jest/docs] [--pages 120] [--callers 1 16]
                                     [--against OTHER/.venv/bin/python] [--idle-seconds 8] [--json PATH]

For each interpreter (this checkout's, and with `--against` another checkout's, for a before/after in one
run), and each run on a cold passage-vector cache (the converted model stays cached: a router meets the
indexing, not the one-off model conversion):
  1. `idle`: the server starts and indexes `--pages` pages of `--docs` with no client; indexing rate
     = passages / (index complete - /health's first ok), read from /health (the unimpeded throughput);
  2. for each `--callers` N: the server starts and, from the moment /health says ok, N clients send
     classify_text over REST back to back for `--window` seconds or until the index is complete, whichever
     comes first (latency "during"; /health's background report is kept as the window ends), then the
     server is left to settle (bench/warm.py) and the same N clients run `--idle-seconds` ("idle").
Printed per run: p50/p99 during vs idle and their ratio (target <= 1.5x), requests answered, and the
indexing rate vs the idle run's (target >= 0.7 when the foreground is idle, which run 1 is for the
next checkout; with traffic it is reported, not judged).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.http import CLASSIFY_TEXT, classify_body, free_port, start, stop
from bench.warm import wait_warm

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DOCS = ROOT / "bench" / "data" / "corpora" / "jest" / "docs"
POLL_S = 0.25
NICE: str | None = None  # --background-nice: $HEXMCP_BACKGROUND_NICE for this checkout's servers


def corpus_of(docs: Path, pages: int, into: Path) -> Path:
    """The first `pages` Markdown pages of `docs` (in path order), copied with their relative paths."""
    files = sorted(p for p in docs.rglob("*") if p.suffix in {".md", ".mdx"})[:pages]
    for path in files:
        target = into / path.relative_to(docs)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return into


def health(base: str) -> dict[str, Any]:
    try:
        return httpx.get(f"{base}/health", timeout=5).json()
    except (httpx.TransportError, ValueError):
        return {}


class IndexWatch:
    """Polls /health until the knowledge index is complete. The rate counts from /health's first ok (when a
    router starts sending), so a checkout without the background report is timed the same way."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.first_done: float | None = time.monotonic()
        self.complete_at: float | None = None
        self.passages = 0
        self.reports: list[dict[str, Any]] = []
        self.snapshot: dict[str, Any] | None = None  # /health's background report as the loaded window ended

    async def run(self) -> None:
        async with httpx.AsyncClient(timeout=5) as client:
            while self.complete_at is None:
                try:
                    report = (await client.get(f"{self.base}/health")).json()
                except (httpx.TransportError, ValueError):
                    report = {}
                knowledge = report.get("knowledge") or {}
                work = knowledge.get("background")
                if work is not None:
                    self.reports.append(work)
                if knowledge.get("complete"):
                    self.complete_at = time.monotonic()
                    self.passages = knowledge.get("passages") or 0
                await asyncio.sleep(POLL_S)

    @property
    def rate(self) -> float | None:
        if self.first_done is None or self.complete_at is None or self.complete_at <= self.first_done:
            return None
        return self.passages / (self.complete_at - self.first_done)


async def drive(url: str, callers: int, until: Any) -> list[float]:
    """`callers` clients sending classify_text back to back until `until()` is true; latencies in ms."""
    latencies: list[float] = []
    body = classify_body(CLASSIFY_TEXT)

    async def caller() -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            while not until():
                started = time.perf_counter()
                response = await client.post(url, json=body)
                if response.status_code == 200:
                    latencies.append(1000 * (time.perf_counter() - started))

    await asyncio.gather(*(caller() for _ in range(callers)))
    return latencies


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def figures(latencies: list[float]) -> dict[str, float]:
    return {"n": len(latencies), "p50": round(statistics.median(latencies), 2) if latencies else float("nan"),
            "p99": round(percentile(latencies, 0.99), 2)}


def warm_model(python: str, cache: Path) -> None:
    """Converts the model into `cache` once (the classifier does it before /health says ok)."""
    port = free_port()
    stop(start([python, "-m", "hexmcp.app.cli", "serve", "--port", str(port), "--no-knowledge"], port,
               ready_path="/health", timeout_s=300, env={"HEXMCP_CACHE_DIR": str(cache)}))


def one_run(python: str, corpus: Path, cache: Path, callers: int | None, idle_seconds: float,
            window_s: float = 60.0) -> dict[str, Any]:
    shutil.rmtree(cache / "knowledge", ignore_errors=True)  # cold vectors; the converted model stays
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = start([python, "-m", "hexmcp.app.cli", "serve", "--port", str(port), "--docs", str(corpus)], port,
                    ready_path="/health", timeout_s=180,
                    env={"HEXMCP_CACHE_DIR": str(cache), **({"HEXMCP_BACKGROUND_NICE": NICE} if NICE else {})})
    try:
        watch = IndexWatch(base)

        async def during() -> list[float]:
            watcher = asyncio.ensure_future(watch.run())
            if callers is None:
                await watcher
                return []
            window_ends = time.monotonic() + window_s
            latencies = await drive(f"{base}/mcp/tools/call", callers,
                                    lambda: watch.complete_at is not None or time.monotonic() > window_ends)
            watch.snapshot = watch.reports[-1] if watch.reports else None
            await watcher
            return latencies

        loaded = asyncio.run(during())
        result: dict[str, Any] = {"callers": callers, "passages": watch.passages,
                                  "index_rate": round(watch.rate or 0.0, 1),
                                  "index_seconds": round((watch.complete_at or 0) - (watch.first_done or 0), 1)}
        if callers is not None:
            result["at_window_end"] = watch.snapshot
            wait_warm(process.pid, base, timeout_s=300)
            deadline = time.monotonic() + idle_seconds
            idle = asyncio.run(drive(f"{base}/mcp/tools/call", callers, lambda: time.monotonic() > deadline))
            result["during"], result["idle"] = figures(loaded), figures(idle)
            result["p99_ratio"] = round(result["during"]["p99"] / result["idle"]["p99"], 2)
        return result
    finally:
        stop(process)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--pages", type=int, default=120)
    parser.add_argument("--callers", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--against", help="another checkout's interpreter, run first (the before)")
    parser.add_argument("--idle-seconds", type=float, default=8.0)
    parser.add_argument("--window", type=float, default=60.0,
                        help="seconds of traffic from /health's first ok (or until the index is complete)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--background-nice", help="$HEXMCP_BACKGROUND_NICE for the servers (default: theirs)")
    args = parser.parse_args(argv)
    global NICE
    NICE = args.background_nice
    pythons = {**({"before": args.against} if args.against else {}), "this": sys.executable}
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="hexmcp-yield-") as scratch:
        corpus = corpus_of(args.docs, args.pages, Path(scratch) / "corpus")
        for label, python in pythons.items():
            cache = Path(scratch) / f"cache-{label}"
            warm_model(python, cache)
            runs = [one_run(python, corpus, cache, None, 0)]  # the unimpeded indexing rate
            for callers in args.callers:
                print(json.dumps({label: runs[-1]}), flush=True)
                runs.append(one_run(python, corpus, cache, callers, args.idle_seconds, args.window))
            print(json.dumps({label: runs[-1]}), flush=True)
            results[label] = runs
            unimpeded = runs[0]["index_rate"]
            print(f"{label} ({python}): {runs[0]['passages']} passages, idle foreground: "
                  f"{unimpeded} passages/s in {runs[0]['index_seconds']} s")
            for run in runs[1:]:
                share = run["index_rate"] / unimpeded if unimpeded else float("nan")
                progress = run.get("at_window_end") or {}
                print(f"  c={run['callers']:>2}: after the {args.window:g} s window: {progress.get('done')}/"
                      f"{progress.get('total')} passages at {progress.get('rate_per_s')}/s (/health)")
                print(f"  c={run['callers']:>2}: classify_text during indexing p50 {run['during']['p50']} ms "
                      f"p99 {run['during']['p99']} ms (n={run['during']['n']}) | idle p50 {run['idle']['p50']} ms "
                      f"p99 {run['idle']['p99']} ms (n={run['idle']['n']}) | p99 ratio {run['p99_ratio']}x "
                      f"(target <= 1.5x) | indexing {run['index_rate']} passages/s = {share:.2f} of unimpeded")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
