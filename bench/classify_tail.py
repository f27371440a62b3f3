"""Where the slowest classify_text requests at 16 callers lose their time (issue 14's p99).

    python -m bench.classify_tail [--duration 8] [--rounds 2] [--callers 16] [--against OTHER/.venv/bin/python]
                                  [--niceness N ...] [--prompts fixed|varied] [--keep DIR] [--json PATH]
                                  (needs wrk: apt-get install wrk)

Runs `hexmcp serve` under a probe (`bench/servers/classify_tail_probe.py`: timestamps at every stage of
every request, and every garbage collection), waits until it is warm (bench/warm.py), drives it with
wrk at `--callers` over REST, then stops it and reads the records. With `--against`, another checkout's
interpreter runs the same probe, interleaved round by round, for a before/after in one run; with
`--niceness N`, this checkout also runs with `--classifier-nice N` (its inference workers N nice steps
below the event loop). `--keep DIR` keeps each server's raw records there.

Printed per server: wrk's p50/p99 and req/s; the server's own p50/p99 (first byte read → answer handed
to the transport); for all requests and for the slowest 2 %, the median of each stage:
  read→enqueue (parse, route, validate on the loop), queue (waiting for a worker), pass (the forward
  pass and head, wall), pass CPU (the worker thread's CPU time in it), hop back (worker done → caller
  resumed on the loop), answer (result → bytes handed to the transport);
the garbage collections during the load (count, total and longest pause, by generation) and how many
of the slowest requests were in flight during a pause of 1 ms or more; the server threads' CPU and
time runnable but waiting for a core, per request (/proc/PID/task/*/schedstat), and the workers' wall
time split into running, runnable and asleep (waiting for the GIL: they never run out of work); and a
bystander: another client calling `list_categories` every 20 ms meanwhile, its p50 and p99.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.classify_floors import per_request, thread_times
from bench.http import CLASSIFY_TEXT, classify_body, free_port, start, stop, varied_prompts, wrk
from bench.warm import wait_warm

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "bench" / "servers" / "classify_tail_probe.py"
JSON = {"Content-Type": "application/json"}
NICE_VARIABLE = "HEXMCP_CLASSIFIER_NICE"  # serve's --classifier-nice (a checkout without it ignores it)
SLOWEST = 0.02
# Another client's cheap call during the load: what everything else on the server meets meanwhile.
BYSTANDER_CALL = {"name": "list_categories", "arguments": {}}
BYSTANDER_PAUSE_MS = 20
LONG_PAUSE_S = 0.001
STAGES = {"read→enqueue": ("arrived", "enqueued"), "queue": ("enqueued", "started"), "pass": ("started", "ended"),
          "hop back": ("ended", "resumed"), "answer": ("resumed", "sent")}


class ProbedServer:
    """One probed `hexmcp serve`; its records accumulate in a file written when it stops."""

    def __init__(self, python: str, niceness: int | None = None) -> None:
        self.out = Path(tempfile.mkstemp(suffix=".json", prefix="classify-tail-")[1])
        port = free_port()
        env = {NICE_VARIABLE: str(niceness)} if niceness is not None else {}
        self.process = start([python, str(PROBE), str(self.out), "serve", "--port", str(port)], port,
                             ready_path="/health", timeout_s=180, env=env)
        self.url = f"http://127.0.0.1:{port}/mcp/tools/call"
        print(f"{python}: warm {wait_warm(self.process.pid, f'http://127.0.0.1:{port}'):.1f} s after /health said ok")
        self.load: list[dict[str, float]] = []  # wrk's figures and the CPU split, per round
        self.threads: list[dict[int, tuple[float, float, float]]] = []  # per round: tid -> ms running, runnable, asleep

    def run(self, body: Any, callers: int, duration: float) -> None:
        bystander: dict[str, dict[str, float]] = {}
        beside = threading.Thread(target=lambda: bystander.update(
            figures=wrk(self.url, BYSTANDER_CALL, JSON, 1, duration, BYSTANDER_PAUSE_MS)))
        before, began = thread_times(self.process.pid), time.monotonic()
        beside.start()
        measured = wrk(self.url, body, JSON, callers, duration)
        beside.join()
        total = measured["requests"] * (1 + 1 / duration)  # wrk's 1 s warm-up is in the CPU figures too
        after, elapsed_ms = thread_times(self.process.pid), (time.monotonic() - began) * 1e3
        loop_wait = (after[self.process.pid][1] - before[self.process.pid][1]) / int(total)
        self.load.append({**measured, **per_request(self.process.pid, before, int(total)), "loop waiting": loop_wait,
                          "bystander p50_ms": bystander["figures"]["p50_ms"],
                          "bystander p99_ms": bystander["figures"]["p99_ms"]})
        # Per thread: on a core, runnable, and neither (asleep: an idle worker, or one waiting for the GIL).
        split = {}
        for tid, (run, wait) in after.items():
            ran, waited = run - before.get(tid, (0.0, 0.0))[0], wait - before.get(tid, (0.0, 0.0))[1]
            split[tid] = (ran, waited, max(0.0, elapsed_ms - ran - waited))
        self.threads.append(split)

    def finish(self, keep: Path | None, name: str) -> dict[str, Any]:
        stop(self.process)
        data = json.loads(self.out.read_text())
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            (keep / f"{name.replace(' ', '-').replace(',', '')}.json").write_text(json.dumps({**data, "load": self.load}))
        self.out.unlink()
        return data


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


QUEUE_TERMS = ("passes ahead", "CPU ahead", "core share ahead")


def queue_ahead(requests: list[dict[str, float]], workers: int) -> dict[int, dict[str, float]]:
    """Why a request waited in the queue, split into two factors: queue = CPU ahead / (workers × core share).
    The passes ahead of it are the ones that ended while it waited; their CPU time is the work it waited
    for (long texts ahead: more), and that over the wall time the workers took for it is the share of a
    core each worker had meanwhile (other threads and processes on the cores: less)."""
    passes = sorted((r["ended"], r["pass_cpu"]) for r in requests)
    ends = [end for end, _ in passes]
    cumulative = [0.0]
    for _, cpu in passes:
        cumulative.append(cumulative[-1] + cpu)
    terms = {}
    for r in requests:
        first, last = bisect.bisect_right(ends, r["enqueued"]), bisect.bisect_right(ends, r["started"])
        cpu = cumulative[last] - cumulative[first]
        waited = r["started"] - r["enqueued"]
        terms[id(r)] = {"passes ahead": last - first, "CPU ahead": cpu * 1e3,
                        "core share ahead": cpu / (workers * waited) if waited > 0 else 1.0}
    return terms


def analyse(data: dict[str, Any], load: list[dict[str, float]],
            threads: list[dict[int, tuple[float, float, float]]]) -> dict[str, Any]:
    requests = [r for r in data["requests"] if "sent" in r and "started" in r]
    latency = [r["sent"] - r["arrived"] for r in requests]
    cut = percentile(latency, 1 - SLOWEST)
    slow = [r for r, total in zip(requests, latency) if total >= cut]
    first, last = min(r["arrived"] for r in requests), max(r["sent"] for r in requests)
    collections = [c for c in data["collections"] if first <= c[0] <= last]
    long_pauses = [c for c in collections if c[1] >= LONG_PAUSE_S]

    ahead = queue_ahead(requests, workers=len({r["worker"] for r in requests}))

    def stages(subset: list[dict[str, float]]) -> dict[str, float]:
        figures = {name: statistics.median(r[b] - r[a] for r in subset) * 1e3 for name, (a, b) in STAGES.items()}
        figures["pass CPU"] = statistics.median(r["pass_cpu"] for r in subset) * 1e3
        figures["in flight at enqueue"] = statistics.median(r["outstanding"] for r in subset)
        for name in QUEUE_TERMS:
            figures[name] = statistics.median(ahead[id(r)][name] for r in subset)
        return figures

    def in_pause(r: dict[str, float]) -> bool:
        return any(c[0] < r["sent"] and c[0] + c[1] > r["arrived"] for c in long_pauses)

    workers = {int(r["worker"]) for r in requests}
    # Shares of the workers' wall time over the load. They never run out of work at 16 callers, so a
    # worker asleep is one waiting for the GIL (or, briefly, for the queue's lock).
    shares = [[part / sum(split) for part in split] for round_ in threads for tid, split in round_.items()
              if tid in workers]
    worker_time = {name: statistics.mean(share[index] for share in shares) * 100
                   for index, name in enumerate(("running", "runnable", "asleep"))}
    by_generation = {g: [c[1] for c in collections if c[2] == g] for g in (0, 1, 2)}
    return {
        "wrk": {key: (max if key == "p99_ms" else statistics.median)(r[key] for r in load)
                for key in ("rps", "p50_ms", "p99_ms", "loop CPU", "workers CPU", "waiting for a core",
                            "loop waiting", "bystander p50_ms", "bystander p99_ms")},
        "server": {"requests": len(requests), "p50_ms": percentile(latency, 0.5) * 1e3,
                   "p99_ms": percentile(latency, 0.99) * 1e3, "slowest_from_ms": cut * 1e3},
        "rounds": load, "all": stages(requests), "slowest": stages(slow),
        "gc": {f"gen{g}": {"count": len(p), "total_ms": sum(p) * 1e3, "max_ms": max(p, default=0) * 1e3}
               for g, p in by_generation.items()},
        "workers' time, %": worker_time,
        "slowest in a pause >= 1 ms": sum(map(in_pause, slow)), "slowest count": len(slow),
        "tracked objects at exit": data["gc_tracked"], "frozen objects": data["gc_frozen"],
    }


def report(name: str, figures: dict[str, Any]) -> None:
    w, s = figures["wrk"], figures["server"]
    print(f"\n== {name}: wrk {w['rps']:.0f} req/s, p50 {w['p50_ms']:.1f} ms, worst-round p99 {w['p99_ms']:.1f} ms; "
          f"server p50 {s['p50_ms']:.1f}, p99 {s['p99_ms']:.1f} ms over {s['requests']} requests")
    print(f"   per request: loop CPU {w['loop CPU']:.2f} ms, workers CPU {w['workers CPU']:.2f} ms, "
          f"waiting for a core {w['waiting for a core']:.2f} ms (the loop {w['loop waiting']:.2f})")
    print(f"   a bystander's list_categories meanwhile ({BYSTANDER_PAUSE_MS} ms apart): p50 {w['bystander p50_ms']:.2f} ms, "
          f"worst-round p99 {w['bystander p99_ms']:.2f} ms")
    print("   inference workers' wall time: " + ", ".join(f"{name} {share:.1f} %"
                                                      for name, share in figures["workers' time, %"].items()))
    print(f"   {'stage (median ms)':<22}{'all':>9}{'slowest 2%':>12}")
    for stage in figures["all"]:
        print(f"   {stage:<22}{figures['all'][stage]:>9.2f}{figures['slowest'][stage]:>12.2f}")
    print("   (the queue = CPU ahead / (workers x core share ahead): passes that ended while a request waited)")
    for generation, gc_figures in figures["gc"].items():
        print(f"   gc {generation}: {gc_figures['count']} collections, {gc_figures['total_ms']:.1f} ms in all, "
              f"longest {gc_figures['max_ms']:.2f} ms")
    print(f"   slowest requests in flight during a pause >= 1 ms: {figures['slowest in a pause >= 1 ms']} of "
          f"{figures['slowest count']}; objects tracked at exit {figures['tracked objects at exit']}, "
          f"frozen {figures['frozen objects']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--callers", type=int, default=16)
    parser.add_argument("--prompts", choices=("fixed", "varied"), default="fixed")
    parser.add_argument("--against", metavar="PYTHON", help="another checkout's interpreter, probed the same way")
    parser.add_argument("--niceness", type=int, action="append", default=[], metavar="N",
                        help="also run this checkout with --classifier-nice N (repeatable)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep each server's raw records in DIR")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    body = classify_body(CLASSIFY_TEXT) if args.prompts == "fixed" else [classify_body(t) for t in varied_prompts()]
    arms: dict[str, tuple[str, int | None]] = {"this": (sys.executable, None)}
    arms.update({"base": (args.against, None)} if args.against else {})
    arms.update({f"this, --classifier-nice {n}": (sys.executable, n) for n in args.niceness})
    servers: dict[str, ProbedServer] = {}
    try:
        for name, (python, niceness) in arms.items():
            servers[name] = ProbedServer(python, niceness)
        for _ in range(args.rounds):
            for server in servers.values():
                server.run(body, args.callers, args.duration)
    finally:
        results = {name: server.finish(args.keep, name) for name, server in servers.items()}
    figures = {name: analyse(data, servers[name].load, servers[name].threads) for name, data in results.items()}
    for name, server_figures in figures.items():
        report(f"{name} ({arms[name][0]}), {args.prompts} prompt, c{args.callers}", server_figures)
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
