"""How soon a concept build stops once told to, in the step that relates concepts, and what its
checkpoints cost: the synthetic corpus of bench/concepts_speed.py (no key phrases), real MiniLM title
vectors.

    .venv/bin/python -m bench.concepts_stop [--passages 10000] [--points 8] [--rounds 3]

Stop latency: the build runs on a thread; once extraction has read its last document, the stop flag is
set after a delay spread over the relating step (`--points` delays from 0 to the step's measured length),
and the time from the flag to the thread's end is taken. A build whose relating step could not be
stopped (main before branch stdoutfd) ends instead after the rest of the step: that column is printed
beside as "left of the step". Overhead: whole builds with the checkpoint that checks a threading.Event
against builds with none, interleaved, `--rounds` each (medians). Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import threading
import time

from hexmcp.tools.concepts import extraction
from hexmcp.tools.concepts.build import build_concept_base
from hexmcp.tools.concepts.glossary import Glossary
from hexmcp.tools.knowledge.chunking import chunk_document
from hexmcp.tools.knowledge.embedder import PassageEmbedder
from hexmcp.tools.knowledge.readers import parse_text

from .concepts_speed import SECTIONS, document, vocabulary


class Stopped(Exception):
    pass


def corpus(passages: int):
    rng = random.Random(16)
    count = max(1, passages // SECTIONS)
    terms = vocabulary(max(200, count), rng)
    documents = [parse_text(f"doc{i}.md", document(i, terms, rng, count), ".md") for i in range(count)]
    return {d.document_id: d for d in documents}, [p for d in documents for p in chunk_document(d)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=10_000)
    parser.add_argument("--points", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    extraction._keyphrases = lambda document, locate: ()  # type: ignore[assignment]
    documents, passages = corpus(args.passages)
    embedder = PassageEmbedder.load()

    def build(**kwargs):
        return build_concept_base(documents, passages, "bench", Glossary(), embed_many=embedder.embed_many,
                                  dimension=embedder.dimension, **kwargs)

    build()  # warm: the title vectors' first embedding, numpy and networkx imports
    plain, checked = [], []
    for _ in range(args.rounds):
        begun = time.perf_counter()
        stats = build().stats
        plain.append(time.perf_counter() - begun)
        flag = threading.Event()

        def check() -> None:
            if flag.is_set():
                raise Stopped

        begun = time.perf_counter()
        build(checkpoint=check)
        checked.append(time.perf_counter() - begun)
    relating = statistics.median(plain) - stats.extraction_seconds
    print(f"{len(documents)} documents, {len(passages)} passages, {stats.concepts} concepts, {stats.edges} edges; "
          f"build {statistics.median(plain):.2f} s, of which relating {relating:.2f} s")
    print(f"build with checkpoints {statistics.median(checked):.2f} s vs without {statistics.median(plain):.2f} s "
          f"(ratio {statistics.median(checked) / statistics.median(plain):.3f}; medians of {args.rounds})")
    print(f"{'stop at (s into relating)':>26} {'stopped after (s)':>18} {'left of the step (s)':>21}")
    latencies = []
    for point in range(args.points):
        delay = relating * point / max(1, args.points - 1) * 0.95
        flag = threading.Event()
        read_all = threading.Event()
        stopped_at: list[float] = []

        def progress(done: int, total: int) -> None:
            if done >= total:
                read_all.set()

        def check() -> None:
            if flag.is_set():
                raise Stopped

        outcome: list[BaseException | None] = []

        def run() -> None:
            try:
                build(progress=progress, checkpoint=check)
                outcome.append(None)
            except Stopped as stop:
                outcome.append(stop)

        thread = threading.Thread(target=run)
        thread.start()
        read_all.wait()
        started = time.perf_counter()
        time.sleep(delay)
        flag.set()
        stopped_at.append(time.perf_counter())
        thread.join()
        latency = time.perf_counter() - stopped_at[0]
        into = stopped_at[0] - started
        latencies.append(latency)
        note = "" if outcome and outcome[0] is not None else " (finished before the flag)"
        print(f"{into:>26.2f} {latency:>18.3f} {max(0.0, relating - into):>21.2f}{note}")
    print(f"stop latency median {statistics.median(latencies):.3f} s, max {max(latencies):.3f} s "
          f"(load average {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
