"""Ablation: a long passage's dense score from its best window (served) against its first window alone
(before windows) and against the mean of its window vectors, in one run over the public sets.

    python -m bench.relevance_windows [--set NAME ...] [--json FILE]

A passage longer than MiniLM's 256-token window has a vector per window (tools/knowledge/windows.py). The
index is built as `search` builds it (vectors from the usual cache); the other two systems are stores made
from the same rows: only each passage's first row (what was embedded before windows), and one row per
passage, the normalised mean of its windows. Each system: hybrid fusion and distinct pages, as `search`.
The figures: bench/diaries/knowledge.md; the decision: docs/adr/0604-distinct-pages-across-versions.md.
(The first version of this script, at commit 3bc7575, added the windows to main's index before they
were served; it measured the same three systems.)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from hexmcp.tools.knowledge.builder import build_index, new_store
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.embedder import PassageEmbedder
from hexmcp.tools.knowledge.fusion import Method
from hexmcp.tools.knowledge.retrieval import KnowledgeIndex
from hexmcp.tools.knowledge.vectors.memory import MemoryVectorStore

from . import relevance_sets
from .relevance import window_rows


def measure(name: str, embedder: PassageEmbedder, cache_dir: Path) -> dict[str, Any]:
    relevance_set = relevance_sets.load_public_set(name)
    documents = load_documents(CorpusSpec(roots=[str(relevance_set.corpus)]))
    started = time.perf_counter()
    served_store = new_store(embedder.dimension)
    index = build_index(documents, embedder, served_store, cache_dir=cache_dir)
    built = time.perf_counter() - started
    passages = index.passages
    windows = window_rows(served_store)
    ids = [p.passage_id for p in passages]
    document_ids = [p.document_id for p in passages]
    first_store, mean_store = MemoryVectorStore(embedder.dimension), MemoryVectorStore(embedder.dimension)
    first_store.upsert(ids, np.stack([windows[i][0] for i in ids]), document_ids)
    means = np.stack([np.sum(windows[i], axis=0) for i in ids])
    mean_store.upsert(ids, means / np.linalg.norm(means, axis=1, keepdims=True), document_ids)
    systems = {"first window": (first_store, None), "best window": (served_store, len(served_store)),
               "mean window": (mean_store, None)}
    page_of = lambda d: index.pages.page(d).key  # noqa: E731 - one line, used once
    result: dict[str, Any] = {"set": name, "passages": len(passages), "rows": len(served_store),
                              "long": sum(1 for i in ids if len(windows[i]) > 1), "build_seconds": round(built, 1),
                              "questions": len(relevance_set.questions), "systems": {}}
    for system, (store, rows) in systems.items():
        view = KnowledgeIndex(list(index.documents.values()), passages, embedder.embed, store, index.version, rows=rows)
        per_question = [relevance_sets.score_ranking([h.document.document_id for h in view.search_documents(
            q.text, 10, method=Method.HYBRID)], q.answers, page_of) for q in relevance_set.questions]
        result["systems"][system] = relevance_sets.mean_scores(per_question)
    return result


def print_result(result: dict[str, Any]) -> None:
    print(f"\n{result['set']}: {result['passages']} passages ({result['long']} longer than the window), "
          f"{result['rows']} window vectors, {result['questions']} questions (built in {result['build_seconds']} s)")
    print(f"{'system':<13} " + " ".join(f"{m:>9}" for m in relevance_sets.MEASURES))
    for system, scores in result["systems"].items():
        print(f"{system:<13} " + " ".join(f"{scores[m]:>9.3f}" for m in relevance_sets.MEASURES))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="sets", action="append", default=[], help="a public set (default: all)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    from hexmcp.tools.cache_dir import default_cache_dir

    embedder = PassageEmbedder.load()
    results = []
    for name in args.sets or relevance_sets.PUBLIC_SETS:
        results.append(measure(name, embedder, default_cache_dir()))
        print_result(results[-1])
    if args.json:
        import json

        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
