"""What one file change costs a watched corpus: from the write to the page being searchable, the CPU seconds
the server spends on it, its RSS before and after, and `search` p99 at c=1 while a burst of 20 edits lands
against the same server idle (issue 31: background work must not slow the foreground).

    python -m bench.watch_latency --corpus django                       # ~275 real pages (bench/data/corpora)
    python -m bench.watch_latency --corpus 10000 --tree ../main         # generated files, main's code
    python -m bench.watch_latency --corpus 100000 --rounds 1 --no-burst

`--tree` names the checkout whose code serves (its own `.venv`; default this one): run it for main and for
a branch to compare before and after. Generated corpora are tiny pages in folders of 100 (1 in 100 has
text), as bench/corpus_probes.py's `many` group makes them. The server runs `--no-classifier`, so what is
measured is the knowledge pack (and the concept extraction that follows each new index). CPU per change is
the server's user+system seconds from the write until /health shows no background work, minus what the
same server spends idle answering the same /health polls for as long (measured in the same run).
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


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return -1.0


def generate(docs: Path, files: int) -> None:
    write_tiny_pages(docs, files, lambda n: f"# Page {n}\n\nPage {n} about lynx{n} and the {n % 7} ways to configure it.\n"
                     if n % 100 == 0 else "")


class Server:
    def __init__(self, process: subprocess.Popen[bytes], port: int) -> None:
        self.process = process
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600)

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


def search_latencies(server: Server, until: Any, minimum: int) -> list[float]:
    samples: list[float] = []
    n = 0
    while len(samples) < minimum or not until():
        elapsed, _ = server.search(QUERIES[n % len(QUERIES)])
        samples.append(elapsed)
        n += 1
    return samples


def burst(server: Server, pages: list[Path], edits: int, spacing_s: float) -> dict[str, Any]:
    """`search` at c=1 idle, then while `edits` pages are written `spacing_s` apart, until all is re-indexed."""
    idle = search_latencies(server, lambda: True, 200)
    written = threading.Event()

    def write() -> None:
        for n in range(edits):
            pages[n % len(pages)].write_text(f"# Burst {n}\n\nEdited in a burst: ocelot{n} configure.\n")
            time.sleep(spacing_s)
        written.set()

    started = time.monotonic()
    writer = threading.Thread(target=write)
    writer.start()
    settled_checks = {"last": 0.0, "ok": False}

    def done() -> bool:  # /health read at most every 0.2 s: the measurement must not be the load
        if not written.is_set():
            return False
        if time.monotonic() - settled_checks["last"] > 0.2:
            settled_checks["last"] = time.monotonic()
            settled_checks["ok"] = server.settled() and server.search(f"ocelot{edits - 1}")[1][:1] != []
        return settled_checks["ok"]

    during = search_latencies(server, done, 50)
    writer.join()
    return {"idle_p50_ms": percentile(idle, 50) * 1000, "idle_p99_ms": percentile(idle, 99) * 1000,
            "burst_p50_ms": percentile(during, 50) * 1000, "burst_p99_ms": percentile(during, 99) * 1000,
            "p99_ratio": percentile(during, 99) / percentile(idle, 99), "burst_requests": len(during),
            "burst_s": time.monotonic() - started}


def run(tree: Path, corpus: str, rounds: int, with_burst: bool, scratch: Path) -> dict[str, Any]:
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
        if with_burst:
            result.update(burst(server, pages[rounds:], 20, 0.1))
        result["rss_end_mb"] = rss_mb(process.pid)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="django", help="django, or a number of generated files")
    parser.add_argument("--tree", action="append", type=Path,
                        help="checkout whose .venv serves (repeatable; default: this one)")
    parser.add_argument("--rounds", type=int, default=5, help="single-file changes measured one at a time")
    parser.add_argument("--no-burst", action="store_true", help="skip the foreground-during-20-edits measure")
    args = parser.parse_args(argv)
    trees = [t.resolve() for t in args.tree] if args.tree else [ROOT]
    with tempfile.TemporaryDirectory(prefix="hexmcp-watch-") as scratch:
        for tree in trees:
            result = run(tree, args.corpus, args.rounds, not args.no_burst, Path(scratch))
            print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
