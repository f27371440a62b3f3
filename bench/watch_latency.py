"""What one file change costs a watched corpus: from the write to the page being searchable, the CPU seconds
the server spends on it, its RSS before and after, and `search` p50/p99 at c=1 and c=16 while bursts of 20
edits land against the same server idle (issue 31: background work must not slow the foreground).

    python -m bench.watch_latency --corpus django                       # ~275 real pages (bench/data/corpora)
    python -m bench.watch_latency --corpus 10000 --tree ../main         # generated files, main's code
    python -m bench.watch_latency --corpus 100000 --rounds 1 --no-burst

`--tree` names the checkout whose code serves (its own `.venv`; default this one): run it for main and for
a branch to compare before and after. Generated corpora are tiny pages in folders of 100 (1 in 100 has
text), as bench/corpus_probes.py's `many` group makes them. The server runs `--no-classifier`, so what is
measured is the knowledge pack (and the concept extraction that follows each new index). CPU per change is
the server's user+system seconds from the write until /health shows no background work, minus what the
same server spends idle answering the same /health polls for as long (measured in the same run).
Foreground: `--cycles` rounds, each a burst per concurrency (20 pages written 0.1 s apart, `search` back to
back throughout, until the server has been settled for TAIL_S) and then, after PAUSE_S, as many idle
requests at that concurrency; pooled over the cycles (a p99 over a few hundred samples is their top two or
three and swung 8-13 ms idle between runs; pooled it is a rank among thousands), with each cycle's p99 beside.
Run under the exclusive lock; findings: bench/diaries/knowledge_scale.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.corpus_probes import find_key, write_tiny_pages
from bench.hostile_probes import serve
from bench.stats import percentile

ROOT = Path(__file__).resolve().parents[1]
DJANGO = ROOT / "bench" / "data" / "corpora" / "django" / "docs"
POLL_S = 0.02
SETTLE_DEADLINE_S = 300.0
TAIL_S = 1.0  # a burst is measured until the server has been settled this long: what trails a re-index (a
# collection of the garbage it left) counts against the burst
PAUSE_S = 1.0  # then a pause before its idle twin


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return -1.0


MALLOC_HEAP = 64 << 20  # glibc's heaps for threads' arenas: 64 MB-aligned anonymous mappings (64-bit Linux)


def arena_heaps(pid: int) -> tuple[int, float]:
    """How many glibc arena heaps the process has mapped and the MB of them resident, from /proc/<pid>/smaps
    (anonymous mappings at a 64 MB boundary; the main arena's [heap] is not counted)."""
    count, resident, heap = 0, 0, False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:  # a mapping's header line
            low, high = (int(x, 16) for x in fields[0].split("-"))
            heap = len(fields) == 5 and low % MALLOC_HEAP == 0 and high - low <= MALLOC_HEAP
            count += int(heap)
        elif heap and fields[0] == "Rss:":
            resident += int(fields[1])
    return count, resident / 1024


class RssTrace:
    """The server's RSS read every second on a thread of its own, for the run's peak: a jump between the
    readings before and after the bursts (glibc arenas keeping freed memory: ADR 0615) shows whole."""

    def __init__(self, pid: int, period_s: float = 1.0) -> None:
        self.pid, self.period_s = pid, period_s
        self.readings: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            with contextlib.suppress(OSError):
                self.readings.append(rss_mb(self.pid))

    def stop(self) -> float:
        """Stops sampling; the largest reading (MB)."""
        self._stop.set()
        self._thread.join()
        return max(self.readings, default=-1.0)


def generate(docs: Path, files: int) -> None:
    write_tiny_pages(docs, files, lambda n: f"# Page {n}\n\nPage {n} about lynx{n} and the {n % 7} ways to configure it.\n"
                     if n % 100 == 0 else "")


class Server:
    def __init__(self, process: subprocess.Popen[bytes], port: int, client: httpx.Client | None = None) -> None:
        self.process = process
        self.client = client or httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600)

    def health(self) -> dict[str, Any]:
        with contextlib.suppress(httpx.TransportError):
            return self.client.get("/health").json()
        return {}

    def knowledge(self) -> dict[str, Any]:
        return find_key(self.health(), "knowledge") or {}

    def settled(self, report: dict[str, Any] | None = None) -> bool:
        """No background work anywhere (index, concepts) and a complete index."""
        report = report or self.health()
        knowledge = report.get("knowledge") or {}
        return bool(knowledge.get("complete")) and not report.get("background") and not any(
            isinstance(part, dict) and part.get("background") for part in report.values())

    def wait_settled(self, deadline_s: float = 900) -> float:
        started = time.monotonic()
        while not self.settled():
            assert self.process.poll() is None, "the server exited"
            assert time.monotonic() - started < deadline_s, "the server did not settle"
            time.sleep(0.2)
        return time.monotonic() - started

    def search(self, query: str) -> tuple[float, list[str]]:
        started = time.perf_counter()
        answer = self.client.post("/mcp/tools/call", json={"name": "searchPassages",
                                                            "arguments": {"query": query, "limit": 5}})
        elapsed = time.perf_counter() - started
        items = (answer.json().get("structuredContent") or {}).get("items", [])
        return elapsed, [item["documentId"] for item in items]


def idle_cpu_rate(server: Server, seconds: float = 3.0) -> float:
    """CPU seconds per second the server spends answering /health polls at POLL_S while idle."""
    pid = server.process.pid
    before, started = cpu_seconds(pid), time.monotonic()
    while time.monotonic() - started < seconds:
        server.health()
        time.sleep(POLL_S)
    return (cpu_seconds(pid) - before) / (time.monotonic() - started)


def one_change(server: Server, page: Path, word: str, document_id: str, idle_rate: float) -> dict[str, float]:
    """Write `word` into `page`; seconds until its new index is up and the page is found, CPU seconds spent."""
    pid = server.process.pid
    version = server.knowledge().get("index_version")
    cpu_before = cpu_seconds(pid)
    started = time.monotonic()
    page.write_text(f"# Changed page\n\nThis page now talks about {word}, and nothing else.\n")
    while True:
        report = server.health()
        knowledge = find_key(report, "knowledge") or {}
        if knowledge.get("index_version") not in (version, None) and knowledge.get("complete"):
            break
        assert time.monotonic() - started < SETTLE_DEADLINE_S, "the change was never indexed"
        time.sleep(POLL_S)
    indexed = time.monotonic() - started
    _, found = server.search(word)
    searchable = time.monotonic() - started
    assert found and found[0] == document_id, (word, found[:3])
    while not server.settled():
        assert time.monotonic() - started < SETTLE_DEADLINE_S, "the server did not settle after the change"
        time.sleep(POLL_S)
    elapsed = time.monotonic() - started
    return {"indexed_s": indexed, "searchable_s": searchable, "settled_s": elapsed,
            "cpu_s": cpu_seconds(pid) - cpu_before - idle_rate * elapsed}


QUERIES = ("how do I configure the cache", "database migrations", "template tags", "testing views",
           "lynx ways to configure", "upgrade the release", "middleware order", "static files")


def search_latencies(server: Server, until: Any, minimum: int, callers: int = 1) -> list[float]:
    """`searchPassages` back to back from `callers` clients (a connection each) until `until()` says so and at
    least `minimum` answers have come back; the latencies of all of them."""
    samples: list[float] = []
    lock = threading.Lock()
    turn = iter(range(1 << 62))
    stop = threading.Event()
    base = str(server.client.base_url)

    def caller() -> None:
        with httpx.Client(base_url=base, timeout=600) as client:
            caller_server = Server(server.process, 0, client)
            while not stop.is_set():
                with lock:
                    n = next(turn)
                elapsed, _ = caller_server.search(QUERIES[n % len(QUERIES)])
                with lock:
                    samples.append(elapsed)

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for thread in threads:
        thread.start()
    while len(samples) < minimum or not until():
        time.sleep(0.005)
    stop.set()
    for thread in threads:
        thread.join()
    return samples


def one_burst(server: Server, pages: list[Path], edits: int, spacing_s: float, callers: int, first: int) -> list[float]:
    """`search` at `callers` while `edits` pages are written `spacing_s` apart, until all is re-indexed and the
    server has no background work left (concepts included)."""
    written = threading.Event()
    last_word = f"ocelot{first + edits - 1}"

    def write() -> None:
        for n in range(first, first + edits):
            pages[n % len(pages)].write_text(f"# Burst {n}\n\nEdited in a burst: ocelot{n} configure.\n")
            time.sleep(spacing_s)
        written.set()

    writer = threading.Thread(target=write)
    writer.start()
    checks: dict[str, float | None] = {"last": 0.0, "settled_at": None}

    def done() -> bool:  # /health read at most every 0.2 s: the measurement must not be the load
        if not written.is_set():
            return False
        now = time.monotonic()
        if checks["settled_at"] is None and now - (checks["last"] or 0.0) > 0.2:
            checks["last"] = now
            if server.settled() and server.search(last_word)[1][:1] != []:
                checks["settled_at"] = now
        return checks["settled_at"] is not None and now - checks["settled_at"] >= TAIL_S

    during = search_latencies(server, done, 20, callers)
    writer.join()
    return during


def latency_figures(samples: list[float]) -> dict[str, float]:
    return {"n": len(samples), "p50_ms": percentile(samples, 50) * 1000, "p99_ms": percentile(samples, 99) * 1000}


def bursts(server: Server, pages: list[Path], cycles: int, callers: tuple[int, ...], edits: int, spacing_s: float,
           idle_rate: float) -> dict[str, Any]:
    """`cycles` rounds; in each, for each concurrency: a burst of `edits` page writes with `search` running
    throughout, then (after PAUSE_S) the same server idle for as many requests as the burst saw. Idle and
    burst samples are pooled per concurrency over all cycles, so a p99 is a rank among thousands, and idle is
    measured in the same minutes as the bursts it is compared with, not once before them."""
    pid = server.process.pid
    pooled: dict[int, dict[str, list[float]]] = {c: {"idle": [], "burst": []} for c in callers}
    per_cycle: dict[int, dict[str, list[float]]] = {c: {"idle": [], "burst": []} for c in callers}
    burst_seconds: list[float] = []
    burst_cpu: list[float] = []
    written = 0
    for _ in range(cycles):
        for c in callers:
            cpu_before, started = cpu_seconds(pid), time.monotonic()
            during = one_burst(server, pages, edits, spacing_s, c, written)
            elapsed = time.monotonic() - started
            burst_seconds.append(elapsed)
            burst_cpu.append(cpu_seconds(pid) - cpu_before - idle_rate * elapsed)
            written += edits
            time.sleep(PAUSE_S)
            idle = search_latencies(server, lambda: True, len(during), c)
            for phase, samples in (("burst", during), ("idle", idle)):
                pooled[c][phase] += samples
                per_cycle[c][phase].append(round(percentile(samples, 99) * 1000, 1))
    result: dict[str, Any] = {"burst_s_median": statistics.median(burst_seconds),
                              "burst_cpu_s_per_edit": statistics.median(burst_cpu) / edits}
    for c in callers:
        idle, during = latency_figures(pooled[c]["idle"]), latency_figures(pooled[c]["burst"])
        result[f"c{c}"] = {"idle": idle, "burst": during, "p99_ratio": during["p99_ms"] / idle["p99_ms"],
                           "p50_ratio": during["p50_ms"] / idle["p50_ms"],
                           "idle_p99_by_cycle": per_cycle[c]["idle"], "burst_p99_by_cycle": per_cycle[c]["burst"]}
    return result


def run(tree: Path, corpus: str, rounds: int, cycles: int, callers: tuple[int, ...], scratch: Path) -> dict[str, Any]:
    docs = scratch / "docs"
    if docs.exists():
        shutil.rmtree(docs)
    if corpus == "django":
        shutil.copytree(DJANGO, docs)
        pages = sorted(p for p in docs.rglob("*.txt"))[:40]
    else:
        generate(docs, int(corpus))
        pages = [docs / f"f{n // 100:04d}" / f"p{n}.md" for n in range(5, int(corpus), max(1, int(corpus) // 40))][:40]
    result: dict[str, Any] = {"tree": str(tree.name), "corpus": corpus}
    with serve(["--no-classifier", "--docs", str(docs)], scratch / f"{tree.name}-{corpus}.log", tree) as (process, port):
        server = Server(process, port)
        trace = RssTrace(process.pid)
        result["first_index_s"] = server.wait_settled()
        knowledge = server.knowledge()
        result["documents"], result["passages"] = knowledge.get("documents"), knowledge.get("passages")
        time.sleep(1.0)
        result["rss_before_mb"] = rss_mb(process.pid)
        idle_rate = idle_cpu_rate(server)
        result["idle_cpu_per_s"] = idle_rate
        changes = []
        for n in range(rounds):
            page = pages[n % len(pages)]
            document_id = page.relative_to(docs).as_posix()
            changes.append(one_change(server, page, f"quokkachange{n}", document_id, idle_rate))
            print(json.dumps({"change": n, **{k: round(v, 3) for k, v in changes[-1].items()}}), flush=True)
        result["rss_after_mb"] = rss_mb(process.pid)
        for key in ("indexed_s", "searchable_s", "settled_s", "cpu_s"):
            result[f"{key}_median"] = statistics.median(c[key] for c in changes)
            result[f"{key}_all"] = [round(c[key], 3) for c in changes]
        if cycles:
            result.update(bursts(server, pages[rounds:], cycles, callers, 20, 0.1, idle_rate))
        result["rss_end_mb"] = rss_mb(process.pid)
        result["rss_max_mb"] = trace.stop()
        with contextlib.suppress(OSError):
            result["malloc_heaps"], result["malloc_heaps_rss_mb"] = arena_heaps(process.pid)
    return result


def rounded(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return round(value, 3) if isinstance(value, float) else value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="django", help="django, or a number of generated files")
    parser.add_argument("--tree", action="append", type=Path,
                        help="checkout whose .venv serves (repeatable; default: this one)")
    parser.add_argument("--rounds", type=int, default=5, help="single-file changes measured one at a time")
    parser.add_argument("--cycles", type=int, default=4,
                        help="bursts of 20 edits per concurrency, each followed by as many idle requests")
    parser.add_argument("--callers", type=int, nargs="+", default=[1, 16], help="search concurrencies")
    parser.add_argument("--no-burst", action="store_true", help="skip the foreground-during-edits measure")
    args = parser.parse_args(argv)
    trees = [t.resolve() for t in args.tree] if args.tree else [ROOT]
    with tempfile.TemporaryDirectory(prefix="hexmcp-watch-") as scratch:
        for tree in trees:
            result = run(tree, args.corpus, args.rounds, 0 if args.no_burst else args.cycles,
                         tuple(args.callers), Path(scratch))
            print(json.dumps(rounded(result)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
