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
from .relevance import print_systems, run_public_sets, score_systems, window_rows


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
                              "questions": len(relevance_set.questions)}
    views = {system: (KnowledgeIndex(list(index.documents.values()), passages, embedder.embed, store, index.version,
                                     rows=rows), Method.HYBRID, True) for system, (store, rows) in systems.items()}
    result["systems"] = score_systems(views, relevance_set.questions, page_of)
    return result


def print_result(result: dict[str, Any]) -> None:
    print(f"\n{result['set']}: {result['passages']} passages ({result['long']} longer than the window), "
          f"{result['rows']} window vectors, {result['questions']} questions (built in {result['build_seconds']} s)")
    print_systems(result["systems"], width=13)


def main(argv: list[str] | None = None) -> int:
    return run_public_sets(__doc__.splitlines()[0], measure, print_result, argv)


if __name__ == "__main__":
    sys.exit(main())
