"""Vector-store speed at 50,000 passages, and indexing throughput against the bare model.

    .venv/bin/python -m bench.search [--rows 50000] [--queries 200] [--qdrant-rows 5000] [--skip-indexing]

Part 1, per store, each in its own subprocess so its peak RSS is its own: 384-dimension vectors
(synthetic and clustered like sentence embeddings: a few rows per topic centre plus noise, unit
length), load time, query p50/p99 for the top 10, and recall@10 against exact search over the same
rows. Stores: memory-exact (numpy, threshold never reached), memory (the default: HNSW past 30,000
rows), qdrant-local (qdrant-client's local mode; at --qdrant-rows, as it is a brute-force test mode,
not a production store); with --qdrant-url, also a running Qdrant server at the full size.

Part 2: the bundled corpus's real passages indexed by build_index (chunking, embedding, the store)
against the bare encoder on the same passage texts; rounds alternate so both see the same machine.
Target: ratio >= 0.8. Prints medians and ratios; asserts nothing.
Run it as a module from the repository root: as a script, bench/http.py would shadow the standard
library's `http` for everything it imports (httpx, hence qdrant-client).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

from bench.stats import percentile

DIMENSION = 384
TOP = 10


def clustered_rows(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(1, count // 50), DIMENSION)).astype(np.float32)
    rows = centres[rng.integers(0, len(centres), count)] + 0.6 * rng.standard_normal((count, DIMENSION)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def open_kind(kind: str, qdrant_url: str | None, folder: str):
    from hexmcp.tools.knowledge.vectors import MemoryVectorStore, open_vector_store

    if kind == "memory-exact":
        return MemoryVectorStore(DIMENSION, ann_threshold=10**9)
    if kind == "memory":
        return open_vector_store("memory", DIMENSION)
    if kind == "qdrant-local":
        return open_vector_store(f"qdrant+path:{folder}", DIMENSION)
    if kind == "qdrant-server":
        return open_vector_store(f"qdrant+{qdrant_url}?collection=hexmcp_bench_{int(time.time())}", DIMENSION)
    raise SystemExit(f"unknown store {kind}")


def measure_store(kind: str, rows: int, queries: int, qdrant_url: str | None) -> dict:
    data = clustered_rows(rows, seed=1)
    rng = np.random.default_rng(2)
    picks = data[rng.integers(0, rows, queries)] + 0.3 * rng.standard_normal((queries, DIMENSION)).astype(np.float32)
    truth = [set(np.argsort(-(data @ q))[:TOP].tolist()) for q in picks]
    ids = [f"p{i}" for i in range(rows)]
    with tempfile.TemporaryDirectory() as folder:
        store = open_kind(kind, qdrant_url, folder)
        started = time.perf_counter()
        for start in range(0, rows, 5000):  # batches as a corpus build hands them over
            store.upsert(ids[start : start + 5000], data[start : start + 5000], [f"d{i // 20}" for i in range(start, min(rows, start + 5000))])
        if hasattr(store, "wait_for_graph"):  # the memory store builds its HNSW graph on a thread
            store.wait_for_graph()
        load_seconds = time.perf_counter() - started
        for q in picks[:10]:
            store.search(q, TOP)
        latencies, recalls = [], []
        for q, expected in zip(picks, truth):
            t0 = time.perf_counter()
            hits = store.search(q, TOP)
            latencies.append(time.perf_counter() - t0)
            recalls.append(len(expected & {int(h.passage_id[1:]) for h in hits}) / TOP)
        filtered = []
        for q in picks[:50]:
            t0 = time.perf_counter()
            store.search(q, TOP, document_id="d7")
            filtered.append(time.perf_counter() - t0)
        store.close()
    return {
        "store": kind, "rows": rows, "load_s": round(load_seconds, 2),
        "p50_ms": round(percentile(latencies, 50) * 1e3, 3), "p99_ms": round(percentile(latencies, 99) * 1e3, 3),
        "filtered_p50_ms": round(percentile(filtered, 50) * 1e3, 3),
        "recall_at_10": round(float(np.mean(recalls)), 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def measure_indexing(rounds: int, documents: list | None = None) -> dict:
    """build_index (real embedder, no vector cache) against the bare encoder on the same passage texts;
    `documents` defaults to the bundled corpus."""
    import os

    from hexmcp.tools.knowledge.builder import build_index
    from hexmcp.tools.knowledge.chunking import chunk_document
    from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
    from hexmcp.tools.knowledge.embedder import PassageEmbedder
    from hexmcp.tools.knowledge.vectors import MemoryVectorStore

    embedder = PassageEmbedder.load()
    documents = documents if documents is not None else load_documents(CorpusSpec())
    texts = [p.indexed_text() for d in documents for p in chunk_document(d)]
    embedder.encoder.encode(texts[:8], os.cpu_count() or 1)  # warm-up
    bare, full = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        embedder.encoder.encode(texts, os.cpu_count() or 1)
        bare.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        index = build_index(documents, embedder, MemoryVectorStore(embedder.dimension))  # no cache: embeds all
        full.append(time.perf_counter() - t0)
    bare_rate, full_rate = len(texts) / float(np.median(bare)), len(texts) / float(np.median(full))
    return {
        "documents": len(documents), "passages": len(texts), "indexed_passages": len(index.passages),
        "bare_passages_per_s": round(bare_rate, 1), "index_passages_per_s": round(full_rate, 1),
        "ratio": round(full_rate / bare_rate, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--qdrant-rows", type=int, default=5_000)
    parser.add_argument("--qdrant-url", help="a running Qdrant server, e.g. http://127.0.0.1:6333")
    parser.add_argument("--indexing-rounds", type=int, default=3)
    parser.add_argument("--skip-indexing", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "ROWS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure_store(args.child[0], int(args.child[1]), args.queries, args.qdrant_url)))
        return
    plan = [("memory-exact", args.rows), ("memory", args.rows), ("qdrant-local", args.qdrant_rows)]
    if args.qdrant_url:
        plan.append(("qdrant-server", args.rows))
    results = []
    for kind, rows in plan:
        command = [sys.executable, "-m", "bench.search", "--child", kind, str(rows), "--queries", str(args.queries)]
        if args.qdrant_url:
            command += ["--qdrant-url", args.qdrant_url]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        results.append(json.loads(output.strip().splitlines()[-1]))
        print(json.dumps(results[-1]), flush=True)
    exact = results[0]
    for result in results[1:]:
        if result["rows"] == exact["rows"]:
            print(f"{result['store']}: p50 {result['p50_ms']} ms = {result['p50_ms'] / exact['p50_ms']:.2f}x exact's "
                  f"{exact['p50_ms']} ms, recall@10 {result['recall_at_10']}")
    if not args.skip_indexing:
        indexing = measure_indexing(args.indexing_rounds)
        print(json.dumps(indexing))
        print(f"indexing: {indexing['index_passages_per_s']} passages/s = {indexing['ratio']:.2f}x the bare model's "
              f"{indexing['bare_passages_per_s']} (target >= 0.8)")


if __name__ == "__main__":
    main()
