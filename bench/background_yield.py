"""The first minute of a server as a router meets it: foreground latency (`classify_text` and `search`, at
c=1 and c=16) while the server indexes a corpus of a few hundred pages, against the same server once idle,
and indexing's own pace with and without that traffic, all from one server in one run (issue 31).

    python -m bench.background_yield [--docs bench/data/corpora/kubernetes/docs] [--pages 300]
                                     [--callers 1 16] [--phase-seconds 6] [--rounds 2]
                                     [--reference-pages 60] [--against OTHER/.venv/bin/python]
                                     [--profile DIR] [--gc-log DIR] [--json PATH]

For each interpreter (this checkout's, and with `--against` another checkout's, run first):
  1. the unimpeded reference: `hexmcp index` over the first `--reference-pages` pages on a cold passage-vector
     cache, nothing else running (the pipeline alone, at the server's priority, no foreground to yield to);
  2. one server, `--pages` pages of `--docs`, a cold passage-vector cache (the converted model stays cached: a
     router meets the indexing, not the one-off model conversion). From /health's first ok, phases of
     `--phase-seconds` each, `--rounds` times over: `quiet` (no traffic: indexing with an idle foreground),
     then for each `--callers` N, N clients sending `classify_text` (MMLU-Pro stems in turn), then N clients
     sending `search` (the corpus's relevance-set questions in turn, bench/data/questions), back to back.
     /health is polled every 0.25 s throughout: indexing's rate in each phase comes from its done counts.
     Phases that begin after the index is complete are left out of "during" (reported, so a corpus too small
     for the window shows);
  3. once the index is complete and the server warm (bench/warm.py: concepts extracted, CPU idle), the same
     traffic phases again ("idle").
Printed: p50/p99 during vs idle per tool and concurrency and their ratio (target <= 1.5x), indexing
passages/s in the quiet phases against the reference (target >= 0.7) and under each traffic phase, and the
first minute second by second from process start (requests, p50/p99 per tool, passages done).
With `--profile DIR`, `py-spy record --gil` samples the server through the during-phases (DIR/<label>.txt:
the stacks that held the GIL, collapsed, by thread): where foreground requests wait for the interpreter.
Latency figures of a profiled run are for reading the profile, not the targets.
With `--gc-log DIR`, the server runs under a wrapper that logs its garbage collections of 2 ms or more, and
the requests slower than their idle p99 are matched against them. /health is polled through every phase.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from bench.http import classify_body, free_port, start, stop, varied_prompts
from bench.warm import wait_warm

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DOCS = ROOT / "bench" / "data" / "corpora" / "kubernetes" / "docs"
QUESTIONS = ROOT / "bench" / "data" / "questions"
POLL_S = 0.25
TARGET_RATIO = 1.5
TARGET_SHARE = 0.7
NICE: str | None = None  # --background-nice: $HEXMCP_BACKGROUND_NICE for this checkout's servers


def corpus_of(docs: Path, pages: int, into: Path) -> Path:
    """The first `pages` Markdown pages of `docs` (in path order), copied with their relative paths."""
    files = sorted(p for p in docs.rglob("*") if p.suffix in {".md", ".mdx"})[:pages]
    for path in files:
        target = into / path.relative_to(docs)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return into


def search_queries(docs: Path) -> list[str]:
    """The relevance-set questions written for this corpus (bench/data/questions/*.yaml names its corpus),
    else the MMLU-Pro stems: what users ask of these pages, not words picked to hit or miss the index."""
    for path in sorted(QUESTIONS.glob("*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        if (ROOT / spec.get("corpus", "")).resolve() == docs.resolve():
            return [item["q"] for item in spec["questions"]]
    return varied_prompts()


def search_body(query: str) -> dict[str, Any]:
    return {"name": "search", "arguments": {"query": query}}


class Recorder:
    """Every answered request: (seconds since process start, tool, callers, phase, latency ms, ok)."""

    def __init__(self, spawned: float) -> None:
        self.spawned = spawned
        self.rows: list[tuple[float, str, int, str, float, bool]] = []

    def add(self, sent: float, tool: str, callers: int, phase: str, latency_ms: float, ok: bool) -> None:
        self.rows.append((sent - self.spawned, tool, callers, phase, latency_ms, ok))


class HealthWatch:
    """Polls /health: (seconds since process start, passages done, total, complete, background kinds)."""

    def __init__(self, base: str, spawned: float) -> None:
        self.base, self.spawned = base, spawned
        self.samples: list[dict[str, Any]] = []
        self.complete_at: float | None = None
        self.passages = 0
        self.stopping = False

    async def run(self) -> None:
        async with httpx.AsyncClient(timeout=5) as client:
            while not self.stopping:
                try:
                    report = (await client.get(f"{self.base}/health")).json()
                except (httpx.TransportError, ValueError):
                    report = {}
                now = time.monotonic() - self.spawned
                knowledge = report.get("knowledge") or {}
                work = knowledge.get("background") or {}
                if knowledge.get("complete") and self.complete_at is None:
                    self.complete_at = now
                    self.passages = knowledge.get("passages") or 0
                done = self.passages if self.complete_at is not None else work.get("done")
                self.samples.append({"t": now, "done": done, "total": work.get("total") or self.passages or None,
                                     "background": [(w.get("kind"), w.get("done"), w.get("total"))
                                                    for w in report.get("background") or []]})
                await asyncio.sleep(POLL_S)

    def done_at(self, t: float) -> int | None:
        """Passages done at `t` (the last sample at or before it that knew)."""
        known = [s["done"] for s in self.samples if s["t"] <= t and s["done"] is not None]
        return known[-1] if known else None

    def rate(self, start: float, end: float) -> float | None:
        """Passages per second between `start` and `end`; from the first report after `start` when the
        indexing had not reported yet (documents still being read)."""
        first = self.done_at(start)
        if first is None:
            later = [s for s in self.samples if start <= s["t"] <= end and s["done"] is not None]
            if not later:
                return None
            start, first = later[0]["t"], later[0]["done"]
        last = self.done_at(end)
        if last is None or end - start < 1.0:
            return None
        return (last - first) / (end - start)


async def traffic(url: str, tool: str, texts: list[str], callers: int, seconds: float, phase: str,
                  recorder: Recorder) -> None:
    """`callers` clients sending `tool` back to back for `seconds`, each text in turn."""
    turn = itertools.count()
    ends = time.monotonic() + seconds
    body = classify_body if tool == "classify_text" else search_body

    async def caller() -> None:
        async with httpx.AsyncClient(timeout=60) as client:
            while time.monotonic() < ends:
                payload = body(texts[next(turn) % len(texts)])
                sent = time.monotonic()
                response = await client.post(url, json=payload)
                ok = response.status_code == 200 and not response.json().get("isError")
                recorder.add(sent, tool, callers, phase, 1000 * (time.monotonic() - sent), ok)

    await asyncio.gather(*(caller() for _ in range(callers)))


def phase_plan(callers: list[int]) -> list[tuple[str, int]]:
    """One round: a quiet phase, then each tool at each concurrency."""
    return [("quiet", 0)] + [(tool, n) for n in callers for tool in ("classify_text", "search")]


async def run_phases(url: str, plan: list[tuple[str, int]], rounds: int, seconds: float, stage: str,
                     texts: dict[str, list[str]], recorder: Recorder, watch: HealthWatch) -> list[dict[str, Any]]:
    phases = []
    for round_number in range(rounds):
        for tool, callers in plan:
            started = time.monotonic() - recorder.spawned
            label = f"{stage}:{tool}:c{callers}:r{round_number}"
            if tool == "quiet":
                await asyncio.sleep(seconds)
            else:
                await traffic(url, tool, texts[tool], callers, seconds, label, recorder)
            ended = time.monotonic() - recorder.spawned
            complete = watch.complete_at is not None and watch.complete_at <= started
            kinds = sorted({kind for sample in watch.samples if started <= sample["t"] <= ended
                            for kind, _, _ in sample["background"] if kind})
            phases.append({"label": label, "stage": stage, "tool": tool, "callers": callers, "start": started,
                           "end": ended, "index_complete_before": complete, "background": kinds,
                           "index_rate": None if complete else watch.rate(started, ended)})
    return phases


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def figures(latencies: list[float]) -> dict[str, Any]:
    return {"n": len(latencies), "p50": round(statistics.median(latencies), 2) if latencies else None,
            "p99": round(percentile(latencies, 0.99), 2) if latencies else None}


def warm_model(python: str, cache: Path) -> None:
    """Converts the model into `cache` once (the classifier does it before /health says ok)."""
    port = free_port()
    stop(start([python, "-m", "hexmcp.app.cli", "serve", "--port", str(port), "--no-knowledge"], port,
               ready_path="/health", timeout_s=300, env={"HEXMCP_CACHE_DIR": str(cache)}))


def reference_rate(python: str, docs: Path, pages: int, cache: Path, scratch: Path) -> dict[str, Any]:
    """`hexmcp index` over the first `pages` pages on a cold vector cache: the pipeline's unimpeded rate."""
    corpus = corpus_of(docs, pages, scratch / f"reference-{pages}")
    shutil.rmtree(cache / "knowledge", ignore_errors=True)
    done = subprocess.run([python, "-m", "hexmcp.app.cli", "index", str(corpus)], cwd=ROOT, capture_output=True,
                          text=True, timeout=900, env={**os.environ, "HEXMCP_CACHE_DIR": str(cache),
                                                       "HEXMCP_LOG_LEVEL": "warning"})
    summary = (done.stdout.strip().splitlines() or [""])[-1]
    found = re.search(r"(\d+) passages \((\d+) embedded.*?([\d.]+) s, ([\d.]+) passages/s", summary)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"hexmcp index failed: {done.stdout[-500:]} {done.stderr[-1500:]}")
    shutil.rmtree(cache / "knowledge", ignore_errors=True)
    return {"pages": pages, "passages": int(found[1]), "embedded": int(found[2]), "seconds": float(found[3]),
            "rate": float(found[4])}


# With --gc-log: the server runs under this wrapper, which writes every garbage collection of 2 ms or more
# (start on the shared monotonic clock, milliseconds, generation), so slow requests can be matched to pauses.
GC_WRAPPER = """
import gc, os, runpy, sys, time
log, began = open(os.environ["HEXMCP_BENCH_GC_LOG"], "w", buffering=1), [0.0]
def watch(phase, info):
    if phase == "start":
        began[0] = time.monotonic()
    elif time.monotonic() - began[0] >= 0.002:
        log.write(f"{began[0]:.4f} {1000 * (time.monotonic() - began[0]):.1f} {info['generation']}\\n")
gc.callbacks.append(watch)
sys.argv = ["hexmcp", *sys.argv[1:]]
runpy.run_module("hexmcp.app.cli", run_name="__main__", alter_sys=True)
"""


def gc_pauses(path: Path, spawned: float) -> list[tuple[float, float, int]]:
    """(start in seconds since process start, milliseconds, generation) of each logged collection."""
    rows = [line.split() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(float(t) - spawned, float(ms), int(generation)) for t, ms, generation in rows]


def slow_and_gc(recorder: Recorder, pauses: list[tuple[float, float, int]], run: dict[str, Any],
                plan: list[tuple[str, int]], counted: set[str]) -> dict[str, Any]:
    """Per tool and concurrency: the requests during indexing slower than the idle p99, and how many of them
    overlapped a logged collection; and the collections of the loaded phases by generation."""
    found: dict[str, Any] = {}
    for tool, callers in plan[1:]:
        limit = run[f"{tool}:c{callers}"]["idle"]["p99"]
        slow = [r for r in recorder.rows if r[1] == tool and r[2] == callers and r[5] and r[3] in counted
                and r[3].startswith("during") and limit and r[4] > limit]
        overlapping = [r for r in slow if any(start < r[0] + r[4] / 1000 and r[0] < start + ms / 1000
                                              for start, ms, _ in pauses)]
        found[f"{tool}:c{callers}"] = {"slower_than_idle_p99": len(slow), "overlapping_a_collection": len(overlapping)}
    loaded_until = max((r[0] + r[4] / 1000 for r in recorder.rows if r[3].startswith("during")), default=0.0)
    during = [p for p in pauses if p[0] <= loaded_until]
    found["collections_during"] = {f"gen{g}": {"n": len([p for p in during if p[2] == g]),
                                               "max_ms": max((p[1] for p in during if p[2] == g), default=None)}
                                   for g in (0, 1, 2)}
    return found


def profiler(pid: int, into: Path | None, label: str) -> subprocess.Popen | None:
    if into is None:
        return None
    into.mkdir(parents=True, exist_ok=True)
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None:
        raise SystemExit("--profile needs py-spy (pip install py-spy)")
    # --nonblocking: py-spy otherwise stops the server for every sample, and only the loaded phases are
    # sampled, which charged its pauses to the indexing (bench/diaries/background.md, run 6).
    return subprocess.Popen([spy, "record", "--pid", str(pid), "--gil", "--threads", "--rate", "200", "--nonblocking",
                             "--format", "raw", "--output", str(into / f"{label}.txt")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def gil_holders(path: Path, top: int = 12) -> dict[str, Any]:
    """py-spy's collapsed GIL samples → share of samples by thread (digits dropped from its name) and the
    innermost frames that held the GIL most often off the event loop's thread."""
    threads: dict[str, int] = {}
    frames: dict[str, int] = {}
    total = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        head, *calls = stack.split(";")
        thread = re.sub(r"[\d_]+$", "", head.split(": ", 1)[-1]) or head
        threads[thread] = threads.get(thread, 0) + int(count)
        total += int(count)
        if thread != "MainThread" and calls:
            frames[f"{thread}: {calls[-1]}"] = frames.get(f"{thread}: {calls[-1]}", 0) + int(count)
    share = lambda n: round(n / total, 3) if total else None  # noqa: E731
    return {"samples": total, "threads": {k: share(v) for k, v in sorted(threads.items(), key=lambda kv: -kv[1])},
            "frames": {k: share(v) for k, v in sorted(frames.items(), key=lambda kv: -kv[1])[:top]}}


def server_run(python: str, corpus: Path, cache: Path, args: argparse.Namespace, label: str,
               texts: dict[str, list[str]]) -> dict[str, Any]:
    shutil.rmtree(cache / "knowledge", ignore_errors=True)  # cold vectors; the converted model stays
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    gc_log = args.gc_log / f"{label}.txt" if args.gc_log else None
    if gc_log is not None:
        gc_log.parent.mkdir(parents=True, exist_ok=True)
    spawned = time.monotonic()
    command = [python, "-c", GC_WRAPPER] if gc_log is not None else [python, "-m", "hexmcp.app.cli"]
    process = start([*command, "serve", "--port", str(port), "--docs", str(corpus)], port,
                    ready_path="/health", timeout_s=180,
                    env={"HEXMCP_CACHE_DIR": str(cache), **({"HEXMCP_BACKGROUND_NICE": NICE} if NICE else {}),
                         **({"HEXMCP_BENCH_GC_LOG": str(gc_log)} if gc_log is not None else {})})
    first_ok = time.monotonic() - spawned
    recorder, watch = Recorder(spawned), HealthWatch(base, spawned)
    plan = phase_plan(args.callers)
    url = f"{base}/mcp/tools/call"
    try:
        async def during() -> list[dict[str, Any]]:
            watcher = asyncio.ensure_future(watch.run())
            spy = profiler(process.pid, args.profile, label)
            try:
                return await run_phases(url, plan, args.rounds, args.phase_seconds, "during", texts, recorder, watch)
            finally:
                if spy is not None:
                    spy.send_signal(2)  # SIGINT: py-spy writes what it sampled and exits
                    spy.wait(timeout=60)
                while watch.complete_at is None:  # the rest of the index, with an idle foreground
                    await asyncio.sleep(POLL_S)
                watch.stopping = True
                await watcher

        phases = asyncio.run(during())
        warm_s = wait_warm(process.pid, base, timeout_s=600)

        async def idle() -> list[dict[str, Any]]:
            # /health is polled through the idle phases too: its answers cost the server's event loop and the
            # clients' alike, and a comparison with them on one side only would charge them to the indexing.
            watch.stopping = False
            poller = asyncio.ensure_future(watch.run())
            try:
                return await run_phases(url, plan[1:], args.rounds, args.phase_seconds, "idle", texts, recorder,
                                        watch)
            finally:
                watch.stopping = True
                await poller

        phases += asyncio.run(idle())
    finally:
        stop(process)
    result = summarise(recorder, watch, phases, first_ok, warm_s, plan)
    if gc_log is not None and gc_log.exists():
        counted = {p["label"] for p in phases if p["stage"] == "idle" or not p["index_complete_before"]}
        result["gc"] = slow_and_gc(recorder, gc_pauses(gc_log, spawned), result, plan, counted)
    if args.profile is not None and (args.profile / f"{label}.txt").exists():
        result["gil"] = gil_holders(args.profile / f"{label}.txt")
    return result


def summarise(recorder: Recorder, watch: HealthWatch, phases: list[dict[str, Any]], first_ok: float,
              warm_s: float, plan: list[tuple[str, int]]) -> dict[str, Any]:
    counted = {p["label"] for p in phases if p["stage"] == "idle" or not p["index_complete_before"]}
    result: dict[str, Any] = {"first_ok_s": round(first_ok, 2), "index_complete_s": round(watch.complete_at or 0, 1),
                              "passages": watch.passages, "warm_after_index_s": round(warm_s, 1),
                              "phases_after_index_complete": sorted({p["label"] for p in phases} - counted),
                              "errors": sum(1 for row in recorder.rows if not row[5])}
    quiet = [p["index_rate"] for p in phases if p["tool"] == "quiet" and p["index_rate"] is not None]
    result["index_rate_quiet"] = round(statistics.median(quiet), 1) if quiet else None
    for tool, callers in plan[1:]:
        key = f"{tool}:c{callers}"
        by_stage = {stage: [row[4] for row in recorder.rows if row[1] == tool and row[2] == callers and row[5]
                            and row[3].startswith(stage) and row[3] in counted]
                    for stage in ("during", "idle")}
        during, idle = figures(by_stage["during"]), figures(by_stage["idle"])
        rates = [p["index_rate"] for p in phases if p["stage"] == "during" and p["tool"] == tool
                 and p["callers"] == callers and p["index_rate"] is not None]
        # After the index is complete the concepts are extracted: background work too, reported on its own.
        later = {p["label"] for p in phases if p["stage"] == "during" and p["index_complete_before"]
                 and "concept extraction" in p["background"]}
        concepts = figures([row[4] for row in recorder.rows if row[1] == tool and row[2] == callers and row[5]
                            and row[3] in later])
        result[key] = {"during": during, "idle": idle, "during_concepts": concepts,
                       "p99_ratio": round(during["p99"] / idle["p99"], 2) if during["p99"] and idle["p99"] else None,
                       "p50_ratio": round(during["p50"] / idle["p50"], 2) if during["p50"] and idle["p50"] else None,
                       "index_rate": round(statistics.median(rates), 1) if rates else None}
    result["first_minute"] = first_minute(recorder, watch, plan)
    return result


def first_minute(recorder: Recorder, watch: HealthWatch, plan: list[tuple[str, int]],
                 seconds: int = 60) -> list[dict[str, Any]]:
    """Second by second from process start: what was sent (tool, callers), n/p50/p99, passages done."""
    rows = []
    for second in range(seconds):
        inside = [r for r in recorder.rows if second <= r[0] < second + 1 and r[3].startswith("during")]
        row: dict[str, Any] = {"s": second, "done": watch.done_at(second + 1)}
        for tool, callers in plan[1:]:
            latencies = [r[4] for r in inside if r[1] == tool and r[2] == callers]
            if latencies:
                row[f"{tool}:c{callers}"] = figures(latencies)
        rows.append(row)
    return rows


def report(label: str, python: str, reference: dict[str, Any], run: dict[str, Any],
           plan: list[tuple[str, int]]) -> None:
    share = run["index_rate_quiet"] / reference["rate"] if run["index_rate_quiet"] and reference["rate"] else None
    print(f"\n{label} ({python})")
    print(f"  reference: hexmcp index, {reference['pages']} pages, {reference['passages']} passages in "
          f"{reference['seconds']} s = {reference['rate']} passages/s (unimpeded)")
    print(f"  server: /health ok at {run['first_ok_s']} s, {run['passages']} passages indexed at "
          f"{run['index_complete_s']} s, warm {run['warm_after_index_s']} s later; errors {run['errors']}")
    print(f"  indexing, quiet phases: {run['index_rate_quiet']} passages/s = "
          f"{'n/a' if share is None else f'{share:.2f}'} of unimpeded (target >= {TARGET_SHARE})")
    if run["phases_after_index_complete"]:
        print(f"  not counted (began after the index was complete): {', '.join(run['phases_after_index_complete'])}")
    for tool, callers in plan[1:]:
        row = run[f"{tool}:c{callers}"]
        during, idle = row["during"], row["idle"]
        print(f"  {tool:>13} c={callers:<2} during p50 {during['p50']} p99 {during['p99']} ms (n={during['n']}) | "
              f"idle p50 {idle['p50']} p99 {idle['p99']} ms (n={idle['n']}) | p99 {row['p99_ratio']}x "
              f"(target <= {TARGET_RATIO}x), p50 {row['p50_ratio']}x | indexing meanwhile {row['index_rate']}/s"
              + (f" | during concept extraction p50 {row['during_concepts']['p50']} p99 "
                 f"{row['during_concepts']['p99']} ms (n={row['during_concepts']['n']})"
                 if row["during_concepts"]["n"] else ""))
    if "gc" in run:
        print(f"  garbage collections of 2 ms or more through the loaded phases: {run['gc']['collections_during']}")
        for key, value in run["gc"].items():
            if key != "collections_during":
                print(f"    {key}: {value['slower_than_idle_p99']} requests during indexing slower than idle p99, "
                      f"{value['overlapping_a_collection']} of them overlapping a collection")
    if "gil" in run:
        print(f"  GIL held during the loaded phases ({run['gil']['samples']} samples), by thread: {run['gil']['threads']}")
        for frame, part in run["gil"]["frames"].items():
            print(f"    {part:>6} {frame}")
    print("  first minute from process start (s: passages done | per tool: n p50/p99 ms)")
    for second in run["first_minute"]:
        cells = [f"{key} {v['n']} {v['p50']}/{v['p99']}" for key, v in second.items() if isinstance(v, dict)]
        if cells or second["s"] % 5 == 0:
            print(f"    {second['s']:>2}s {second['done']!s:>5} | {' | '.join(cells)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--callers", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--phase-seconds", type=float, default=6.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--reference-pages", type=int, default=60)
    parser.add_argument("--against", help="another checkout's interpreter, run first (the before)")
    parser.add_argument("--profile", type=Path, help="a folder for py-spy's GIL samples of the during-phases")
    parser.add_argument("--gc-log", type=Path, help="a folder for the server's garbage collections of 2 ms or more")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--background-nice", help="$HEXMCP_BACKGROUND_NICE for the servers (default: theirs)")
    args = parser.parse_args(argv)
    global NICE
    NICE = args.background_nice
    pythons = {**({"before": args.against} if args.against else {}), "this": sys.executable}
    texts = {"classify_text": varied_prompts(), "search": search_queries(args.docs)}
    plan = phase_plan(args.callers)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="hexmcp-yield-") as scratch:
        corpus = corpus_of(args.docs, args.pages, Path(scratch) / "corpus")
        for label, python in pythons.items():
            cache = Path(scratch) / f"cache-{label}"
            warm_model(python, cache)
            reference = reference_rate(python, args.docs, args.reference_pages, cache, Path(scratch))
            run = server_run(python, corpus, cache, args, label, texts)
            results[label] = {"reference": reference, "run": run}
            report(label, python, reference, run, plan)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
