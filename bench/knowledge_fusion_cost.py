"""What hybrid fusion costs at scale, and what an exact cut of its lexical candidates would save.

    .venv/bin/python -m bench.knowledge_fusion_cost [--passages 50000] [--queries 300]

`fusion.fuse` (HYBRID) builds a dict of every passage with a BM25 score above zero, another of the
union with the dense hits, and sorts it all: with real questions that is 40 % of a 50,000-passage
corpus per query. Yet only a few of them can reach the top `limit`: a passage the dense search did not
return scores w·floor + (1−w)·bm25/best, which grows with its BM25 score alone, so the best `limit` of
those are among the lexical top len(dense) + limit. Keeping the BM25 scores of those and of the dense
hits (ties at the boundary kept too) gives the same ranking; this bench checks that on every query and
times both, then `search_passages`/`search_documents` end to end with the cut applied in front of
`fuse`, alternating with the code as it is. The cut is a prototype here, for retrieval.py/fusion.py;
the bench patches nothing on disk.
Corpus and stand-in passage vectors as in bench/knowledge_scale.py (queries embedded by MiniLM).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.knowledge_scale import TOP, HashedPassageVectors, load_average, load_queries
from bench.scale_corpus import REPOSITORY, build_corpus, default_sources
from bench.stats import percentile


def exact_cut(dense: dict[int, float], lexical: np.ndarray, limit: int) -> np.ndarray:
    """`lexical` with zeros everywhere except the dense hits and the lexical top len(dense) + limit."""
    keep = len(dense) + limit
    hits = np.flatnonzero(lexical)
    if len(hits) > keep:
        floor = np.partition(lexical[hits], len(hits) - keep)[len(hits) - keep]
        hits = hits[lexical[hits] >= floor]  # every tie of the last one kept: fuse breaks ties by index
    kept = np.zeros_like(lexical)
    kept[hits] = lexical[hits]
    dense_ids = np.fromiter(dense, dtype=np.int64, count=len(dense))
    kept[dense_ids] = lexical[dense_ids]
    return kept


def ms(samples: list[float], q: float) -> float:
    return round(percentile(samples, q) * 1e3, 2)


def main() -> None:
    from hexmcp.tools.knowledge import retrieval
    from hexmcp.tools.knowledge.builder import build_index, new_store
    from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
    from hexmcp.tools.knowledge.embedder import PassageEmbedder
    from hexmcp.tools.knowledge.fusion import Method, fuse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--work-dir", type=Path, default=Path(tempfile.gettempdir()) / "hexmcp-knowledge-scale")
    parser.add_argument("--corpora", type=Path, help="the evaluation corpora folder (default bench/data/corpora)")
    parser.add_argument("--questions", type=Path, default=REPOSITORY / "bench" / "data" / "questions")
    args = parser.parse_args()
    folder = args.work_dir / f"corpus-{args.passages}"
    build_corpus(folder, args.passages, default_sources(args.corpora))
    queries = load_queries(args.questions, args.queries)
    embedder = PassageEmbedder.load()
    store = new_store(embedder.dimension)
    index = build_index(load_documents(CorpusSpec(roots=[folder])), HashedPassageVectors(embedder), store)
    store.wait_for_graph()
    print(json.dumps({"passages": len(index.passages), "queries": len(queries), "load": load_average()}), flush=True)

    inputs = []
    for query in queries:
        hits = index._store.search(index.embed_query(query), retrieval.DENSE_DEPTH)
        inputs.append(({index._by_id[h.passage_id]: h.score for h in hits}, index._lexical.scores(query)))
    for limit in (TOP, retrieval.DENSE_DEPTH):  # search_passages' top 10, and what search_documents asks for
        whole, cut, same = [], [], True
        for dense, lexical in inputs:
            t0 = time.perf_counter()
            expected = fuse(Method.HYBRID, dense, lexical, limit)
            t1 = time.perf_counter()
            got = fuse(Method.HYBRID, dense, exact_cut(dense, lexical, limit), limit)
            t2 = time.perf_counter()
            whole.append(t1 - t0)
            cut.append(t2 - t1)
            same = same and got == expected
        print(json.dumps({"limit": limit, "fuse_every_hit_p50_ms": ms(whole, 50), "fuse_every_hit_p99_ms": ms(whole, 99),
                          "cut_and_fuse_p50_ms": ms(cut, 50), "cut_and_fuse_p99_ms": ms(cut, 99),
                          "identical_rankings": same}), flush=True)

    as_is = retrieval.fuse

    def fuse_after_cut(method, dense, lexical, limit, dense_weight=retrieval.DENSE_WEIGHT):
        if method is Method.HYBRID:
            lexical = exact_cut(dense, lexical, limit)
        return as_is(method, dense, lexical, limit, dense_weight)

    timings: dict[str, list[float]] = {name: [] for name in ("documents", "passages", "documents_cut", "passages_cut")}
    for query in queries:
        for suffix, function in (("", as_is), ("_cut", fuse_after_cut)):
            retrieval.fuse = function
            t0 = time.perf_counter()
            index.search_documents(query, TOP)
            t1 = time.perf_counter()
            index.search_passages(query, TOP)
            t2 = time.perf_counter()
            timings["documents" + suffix].append(t1 - t0)
            timings["passages" + suffix].append(t2 - t1)
    retrieval.fuse = as_is
    print(json.dumps({f"search_{name}_{q}_ms": ms(samples, q) for name, samples in timings.items() for q in (50, 99)}
                     | {"load": load_average()}), flush=True)


if __name__ == "__main__":
    main()
