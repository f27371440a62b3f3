"""The knowledge pack at 50,000 and 100,000 passages of real text: indexing, peak RSS, search latency.

    .venv/bin/python -m bench.knowledge_scale [--passages 50000 100000] [--stores memory qdrant-local qdrant-edge]
        [--sample-passages 300] [--rounds 3] [--queries 300] [--real-vectors] [--recall-queries 200] [--lock FILE]

Corpus: real documentation text found on the machine (bench/scale_corpus.py), copied once per size.
Queries: the hand-written questions of bench/data/questions/*.yaml and bench/knowledge_relevance.yaml
(a few hundred, none generated).

Part 1, indexing throughput against the bare encoder: a sample of the corpus's documents (about
--sample-passages passages) indexed by the product's build_index with the real MiniLM embedder and
no cache, against `encoder.encode` on the same passage texts, rounds alternating (bench/search.py's
measure_indexing). Medians and their ratio; target >= 0.8.

Part 2, per store and size, each in its own subprocess so its peak RSS is its own: the documents
loaded and indexed through build_index (chunking, the store's upserts, BM25, the KnowledgeIndex), the
memory store's HNSW graph waited for, then `search_documents` and `search_passages` (hybrid, top 10)
timed alternately over every query, p50 and p99 (nearest rank, bench/stats.py), and what one query
spends where (query embedding, BM25 scores, the store's search, the rest: fusion and bookkeeping in
retrieval.py/fusion.py). Targets: search p50 <= 30 ms, p99 <= 100 ms at 50,000 passages.
Then the store's recall@10 against an exact scan of its own rows (the memory store's matrix, Qdrant
Edge's `exact` search) over --recall-queries queries, with query vectors made the way the passages'
were (in distribution) and with the model's query vectors as served.

Stores: `memory` (in process, faiss HNSW past 30,000 rows), `qdrant-local` (qdrant-client's local mode,
a brute-force scan), `qdrant-edge` (Qdrant Edge: Qdrant's engine and HNSW in process).

--lock FILE shares a machine with other work: each store's subprocess holds FILE's shared flock while it
builds and its exclusive flock while it times queries, so the latencies are measured alone (the parent
holds the shared lock while it builds the corpora; run it outside any lock of its own).

Embedding 100,000 passages takes this 2-core machine over an hour, twice over for the bare encoder, so
by default part 2's passage vectors are stand-ins: the passage's words feature-hashed into the
model's 384 dimensions and normalised (text-derived, so clustered by topic like real embeddings, and
computed in seconds). Queries are always embedded by the real model. --real-vectors embeds every
passage with MiniLM instead, through the product's per-document vector cache (a second run is fast).
Run it as a module from the repository root (see bench/search.py on why).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import yaml

from bench.scale_corpus import REPOSITORY, build_corpus, default_sources
from bench.stats import percentile

TOP = 10
_WORD = re.compile(r"\w+")


class HashedPassageVectors:
    """An embedder for build_index whose passage vectors are hashed word counts and whose query vectors
    are the real model's: the store, BM25 and fusion see a realistic load without hours of encoding."""

    def __init__(self, embedder) -> None:
        self.model_key = f"bench-hashed-words/{embedder.model_key}"
        self.dimension = embedder.dimension
        self.embed = embedder.embed
        self.token_offsets = embedder.token_offsets  # long passages get their windows' rows, as when served
        self.embedded = 0
        self.seconds = 0.0  # spent hashing: build_index's time less this is the pipeline's own overhead
        self._buckets: dict[str, tuple[int, float]] = {}

    def _bucket(self, word: str) -> tuple[int, float]:
        found = self._buckets.get(word)
        if found is None:
            digest = zlib.crc32(word.encode())
            found = self._buckets[word] = (digest % self.dimension, 1.0 if digest & 1 << 31 else -1.0)
        return found

    def vector(self, text: str) -> np.ndarray:
        pairs = [self._bucket(w) for w in _WORD.findall(text.lower())] or [(0, 1.0)]
        slots, signs = zip(*pairs)
        vector = np.bincount(slots, weights=signs, minlength=self.dimension).astype(np.float32)
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector

    def submit_many(self, texts: list[str], passages: int | None = None):
        started = time.perf_counter()
        vectors = np.stack([self.vector(t) for t in texts]) if texts else np.zeros((0, self.dimension), np.float32)
        self.embedded += len(texts) if passages is None else passages
        self.seconds += time.perf_counter() - started
        return _Ready(vectors)


class _Ready:
    def __init__(self, vectors: np.ndarray) -> None:
        self._vectors = vectors

    def result(self) -> np.ndarray:
        return self._vectors


def load_queries(folder: Path, limit: int) -> list[str]:
    """The hand-written questions, round-robin across sets so a limit keeps every set represented."""
    sets = []
    for path in sorted(folder.glob("*.yaml")) + [REPOSITORY / "bench" / "knowledge_relevance.yaml"]:
        if path.exists():
            data = yaml.safe_load(path.read_text()) or {}
            sets.append([q["q"] for q in data.get("questions", []) if q.get("q")])
    queries: list[str] = []
    for row in range(max(map(len, sets), default=0)):
        queries.extend(s[row] for s in sets if row < len(s))
    return queries[:limit]


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def current_rss_mb() -> float | None:
    try:
        import psutil
    except ModuleNotFoundError:
        return None
    return round(psutil.Process().memory_info().rss / 2**20, 1)


STORE_SPECS = {"memory": "memory", "qdrant-local": "qdrant+path:{folder}", "qdrant-edge": "qdrant-edge+path:{folder}/edge"}


def open_store(kind: str, dimension: int, folder: Path):
    from hexmcp.tools.knowledge.builder import new_store

    return new_store(dimension, STORE_SPECS[kind].format(folder=folder))


class MachineLock:
    """A flock on a file shared with other work, held shared or exclusive and switched in place (flock
    converts the one lock); does nothing without a path."""

    def __init__(self, path: Path | None) -> None:
        self._handle = open(path, "a") if path is not None else None  # noqa: SIM115 - held across phases

    def hold(self, mode: int) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle, mode)

    def release(self) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


def measure_scale(kind: str, corpus: Path, queries: list[str], real_vectors: bool, cache_dir: Path,
                  lock: Path | None = None, recall_queries: int = 200) -> dict:
    """One store at one size, in this process: build (under the shared lock), then every query through
    both tools and the recall check (under the exclusive one)."""
    from hexmcp.tools.knowledge.builder import build_index
    from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
    from hexmcp.tools.knowledge.embedder import PassageEmbedder

    result: dict = {"store": kind, "vectors": "MiniLM" if real_vectors else "hashed words (queries: MiniLM)"}
    machine = MachineLock(lock)
    machine.hold(fcntl.LOCK_SH)
    embedder = PassageEmbedder.load()
    started = time.perf_counter()
    documents = load_documents(CorpusSpec(roots=[corpus]))
    result["load_documents_s"] = round(time.perf_counter() - started, 1)
    # Qdrant's local mode commits to SQLite once per point (18 ms each on this machine's disk: 30 minutes
    # at 100,000 passages), so its folder goes on tmpfs where there is one: the figures are Qdrant's CPU.
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as folder:
        store = open_store(kind, embedder.dimension, Path(folder))
        started = time.perf_counter()
        passage_vectors = embedder if real_vectors else HashedPassageVectors(embedder)
        index = build_index(documents, passage_vectors, store, cache_dir=cache_dir if real_vectors else None)
        result["build_index_s"] = round(time.perf_counter() - started, 1)
        if not real_vectors:  # what indexing costs besides the encoder, to set beside the encoder's rate
            result["build_index_less_vectors_s"] = round(result["build_index_s"] - passage_vectors.seconds, 1)
        if hasattr(store, "wait_for_graph"):  # the memory store's graph thread, Qdrant Edge's last optimization
            started = time.perf_counter()
            store.wait_for_graph()
            result["hnsw_wait_s"] = round(time.perf_counter() - started, 1)
            result["uses_ann"] = store.uses_ann
        result.update(documents=len(documents), passages=len(index.passages), rows=len(store),
                      rss_after_build_mb=current_rss_mb())
        machine.hold(fcntl.LOCK_EX)
        result["load_at_timing"] = load_average()
        result.update(time_queries(index, queries))
        if not real_vectors:
            in_distribution = [passage_vectors.vector(q) for q in queries[:recall_queries]]
            result["recall_at_10_hashed_queries"] = store_recall(store, in_distribution)
        result["recall_at_10_model_queries"] = store_recall(store, [index.embed_query(q) for q in queries[:recall_queries]])
        machine.release()
        store.close()
    result["peak_rss_mb"] = peak_rss_mb()
    return result


def time_queries(index, queries: list[str]) -> dict:
    from hexmcp.tools.knowledge.retrieval import DENSE_DEPTH

    for query in queries[:10]:  # warm-up: first-touch pages, the query encoder's session
        index.search_documents(query, TOP)
        index.search_passages(query, TOP)
    documents, passages, embed, lexical, store, hits = [], [], [], [], [], []
    for query in queries:
        t0 = time.perf_counter()
        index.search_documents(query, TOP)
        t1 = time.perf_counter()
        found = index.search_passages(query, TOP)
        t2 = time.perf_counter()
        vector = index.embed_query(query)
        t3 = time.perf_counter()
        scores = index._lexical.scores(query)
        t4 = time.perf_counter()
        index._store.search(vector, DENSE_DEPTH)
        t5 = time.perf_counter()
        documents.append(t1 - t0)
        passages.append(t2 - t1)
        embed.append(t3 - t2)
        lexical.append(t4 - t3)
        store.append(t5 - t4)
        hits.append(int(np.count_nonzero(scores)))
        assert found, f"no passage found for {query!r}"

    def ms(samples: list[float], q: float) -> float:
        return round(percentile(samples, q) * 1e3, 1)

    rest = [p - e - l - s for p, e, l, s in zip(passages, embed, lexical, store)]
    return {
        "queries": len(queries),
        "search_documents_p50_ms": ms(documents, 50), "search_documents_p99_ms": ms(documents, 99),
        "search_passages_p50_ms": ms(passages, 50), "search_passages_p99_ms": ms(passages, 99),
        "query_embed_p50_ms": ms(embed, 50), "bm25_scores_p50_ms": ms(lexical, 50),
        "store_search_p50_ms": ms(store, 50), "rest_of_search_passages_p50_ms": ms(rest, 50),
        "rest_of_search_passages_p99_ms": ms(rest, 99),
        "lexical_hits_p50": int(percentile(hits, 50)), "lexical_hits_max": max(hits),
    }


def store_recall(store, vectors: list[np.ndarray], k: int = TOP) -> float | None:
    """Mean recall@k of `store.search` against an exact scan of the store's own rows, or None for a
    store that has no exact scan to compare with (qdrant-client's local mode is one already)."""
    exact = exact_search(store)
    if exact is None:
        return None
    recalls = []
    for vector in vectors:
        want = exact(vector, k)
        got = {hit.passage_id for hit in store.search(vector, k)}
        recalls.append(len(got & want) / max(1, len(want)))
    return round(float(np.mean(recalls)), 4)


def exact_search(store):
    """A function (vector, k) -> the k nearest passage ids by exact scan, for the stores that have one."""
    if hasattr(store, "_shard"):  # Qdrant Edge: its own exact search, the same rows without the graph
        import qdrant_edge as edge

        def edge_exact(vector: np.ndarray, k: int) -> set[str]:
            request = edge.QueryRequest(limit=k, query=edge.Query.Nearest((vector / np.linalg.norm(vector)).tolist()),
                                        with_payload=["passage_id"], params=edge.SearchParams(exact=True))
            return {point.payload["passage_id"] for point in store._shard.query(request)}

        return edge_exact
    if hasattr(store, "_matrix"):  # the memory store: its live rows, scanned with numpy

        def memory_exact(vector: np.ndarray, k: int) -> set[str]:
            with store._lock:
                live = np.flatnonzero(store._live[: store._used])
                scores = store._matrix[live] @ (vector / np.linalg.norm(vector))
                best = live[np.argsort(-scores)[:k]]
                return {store._slot_passage[slot] for slot in best}

        return memory_exact
    return None


def measure_throughput(corpus: Path, sample_passages: int, rounds: int) -> dict:
    from bench.search import measure_indexing
    from hexmcp.tools.knowledge.chunking import chunk_document
    from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents

    # Documents in a fixed shuffled order, so the sample spans the sources (short pages and long changelogs).
    documents = load_documents(CorpusSpec(roots=[corpus]))
    sample, total = [], 0
    for position in np.random.default_rng(7).permutation(len(documents)):
        if total >= sample_passages:
            break
        sample.append(documents[position])
        total += len(chunk_document(documents[position]))
    return measure_indexing(rounds, documents=sample)


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, nargs="+", default=[50_000, 100_000])
    parser.add_argument("--stores", nargs="+", default=["memory", "qdrant-local"], choices=sorted(STORE_SPECS))
    parser.add_argument("--recall-queries", type=int, default=200, help="queries for each store's recall@10 against exact")
    parser.add_argument("--lock", type=Path, help="a flock file: shared while building, exclusive while timing queries")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--sample-passages", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the throughput comparison")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-scale", action="store_true", help="only the throughput comparison")
    parser.add_argument("--real-vectors", action="store_true", help="embed every passage with MiniLM (slow)")
    parser.add_argument("--work-dir", type=Path, default=Path(tempfile.gettempdir()) / "hexmcp-knowledge-scale",
                        help="where the corpora (and, with --real-vectors, the vector cache) are kept between runs")
    parser.add_argument("--corpora", type=Path, help="the evaluation corpora folder (default bench/data/corpora)")
    parser.add_argument("--questions", type=Path, default=REPOSITORY / "bench" / "data" / "questions")
    parser.add_argument("--child", nargs=2, metavar=("STORE", "CORPUS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    queries = load_queries(args.questions, args.queries)
    cache_dir = args.work_dir / "cache"
    if args.child:
        result = measure_scale(args.child[0], Path(args.child[1]), queries, args.real_vectors, cache_dir,
                               args.lock, args.recall_queries)
        print(json.dumps(result))
        return
    print(json.dumps({"cpus": os.cpu_count(), "queries": len(queries), "load": load_average()}), flush=True)
    sources = default_sources(args.corpora)
    corpora = {n: args.work_dir / f"corpus-{n}" for n in args.passages}
    building = MachineLock(args.lock)
    building.hold(fcntl.LOCK_SH)
    for n, folder in corpora.items():
        manifest = build_corpus(folder, n, sources)
        print(json.dumps({"corpus": n, **{k: v for k, v in manifest.items() if k != "requested"}}), flush=True)
    building.release()
    if not args.skip_throughput:  # under no lock of its own: with --lock, time it with the parent under flock -x
        throughput = measure_throughput(corpora[min(corpora)], args.sample_passages, args.rounds)
        print(json.dumps({**throughput, "load": load_average()}), flush=True)
        print(f"indexing: {throughput['index_passages_per_s']} passages/s = {throughput['ratio']:.2f}x the bare "
              f"encoder's {throughput['bare_passages_per_s']} (target >= 0.8)", flush=True)
    for n, folder in {} if args.skip_scale else corpora.items():
        for kind in args.stores:
            command = [sys.executable, "-m", "bench.knowledge_scale", "--child", kind, str(folder),
                       "--queries", str(args.queries), "--questions", str(args.questions), "--work-dir", str(args.work_dir),
                       "--recall-queries", str(args.recall_queries)]
            command += ["--real-vectors"] if args.real_vectors else []
            command += ["--lock", str(args.lock)] if args.lock else []
            before = load_average()
            run = subprocess.run(command, capture_output=True, text=True, cwd=REPOSITORY)
            if run.returncode != 0:
                print(json.dumps({"corpus": n, "store": kind, "failed": run.stderr.strip().splitlines()[-3:]}), flush=True)
                continue
            result = json.loads(run.stdout.strip().splitlines()[-1])
            print(json.dumps({"corpus": n, **result, "load_before": before, "load_after": load_average()}), flush=True)
            print(f"{kind} at {result['passages']} passages: search_documents p50 {result['search_documents_p50_ms']} "
                  f"/ p99 {result['search_documents_p99_ms']} ms, search_passages p50 {result['search_passages_p50_ms']} "
                  f"/ p99 {result['search_passages_p99_ms']} ms (targets 30 / 100), peak RSS {result['peak_rss_mb']} MB, "
                  f"store recall@10 {result.get('recall_at_10_hashed_queries')} / {result['recall_at_10_model_queries']} "
                  f"(in-distribution / model queries)", flush=True)


if __name__ == "__main__":
    main()
