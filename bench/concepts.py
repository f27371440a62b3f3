"""Concept quality on the bundled corpus, over bench/concepts_relevance.yaml: resolveConcept
accuracy@1 (targets >= 0.9) and the share of explainConcept's top-3 passages drawn from the term's
defining documents (target >= 0.8), by kind of term; plus extraction time beside indexing time.

    python -m bench.concepts [--set FILE] [--all-documents] [--docs PATH] [--verbose]

With --docs (any corpus) only the timings and the concept counts are printed. The speed bench on a
50,000-passage corpus is bench/concepts_speed.py.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from hexmcp.tools.concepts.base import ConceptBase
from hexmcp.tools.concepts.build import build_concept_base
from hexmcp.tools.concepts.explain import explain
from hexmcp.tools.concepts.glossary import Glossary
from hexmcp.tools.concepts.resolver import resolve
from hexmcp.tools.knowledge.builder import build_index, new_store
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.embedder import PassageEmbedder
from hexmcp.tools.knowledge.retrieval import KnowledgeIndex

from .relevance import judged_corpus

DEFAULT_SET = Path(__file__).with_name("concepts_relevance.yaml")
TOP = 3


def load_set(path: Path = DEFAULT_SET) -> tuple[list[dict[str, Any]], list[str]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data["terms"], data["judged_documents"]


def concept_base(index: KnowledgeIndex, embedder: PassageEmbedder, glossary: Glossary | None = None) -> ConceptBase:
    return build_concept_base(index.documents, index.passages, index.version, glossary or Glossary(),
                              embed_many=embedder.embed_many, dimension=embedder.dimension,
                              embed_query=index.embed_query, nearest_passages=index.nearest_passages)


def evaluate(base: ConceptBase, terms: list[dict[str, Any]], verbose: bool = False) -> dict[str, float]:
    """accuracy@1 of resolve, and the share of explain's top passages (of the expected concept) from
    its defining documents."""
    hits = drawn = shown = 0
    for row in terms:
        found = resolve(base, row["term"])
        best = found.best.concept_id if found.best else None
        hits += best == row["concept"]
        if row["concept"] in base.concepts:
            passages = explain(base, row["concept"], TOP).passages
            shown += len(passages)
            drawn += sum(p.passage.document_id in row["defined_in"] for p in passages)
        if verbose and best != row["concept"]:
            how = f"{found.best.matched.value} {found.best.score}" if found.best else "-"
            print(f"  miss: {row['term']!r} -> {best} ({how}); expected {row['concept']}"
                  f"{'' if row['concept'] in base.concepts else ' (no such concept)'}")
    return {"accuracy_at_1": hits / len(terms), "explain_top3_from_defining": drawn / shown if shown else 0.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument("--docs", action="append", default=[], help="another corpus: timings and counts only")
    parser.add_argument("--all-documents", action="store_true", help="bundled corpus, newer documents included")
    parser.add_argument("--verbose", action="store_true", help="print every miss")
    args = parser.parse_args(argv)
    terms, judged = load_set(args.set)
    embedder = PassageEmbedder.load()
    if args.docs:
        documents = load_documents(CorpusSpec(roots=args.docs))
    elif args.all_documents:
        documents = load_documents(CorpusSpec())
    else:
        documents = judged_corpus(judged)
    started = time.perf_counter()
    index = build_index(documents, embedder, new_store(embedder.dimension))
    indexing = time.perf_counter() - started
    base = concept_base(index, embedder)
    stats = base.stats
    assert stats is not None
    print(f"{stats.documents} documents, {stats.passages} passages: indexing {indexing:.1f} s (embedding, no cache); "
          f"concepts {stats.total_seconds:.1f} s, of which extraction {stats.extraction_seconds:.1f} s; "
          f"{stats.concepts} concepts, {stats.edges} edges, {stats.evidence} sightings")
    if args.docs:
        return 0
    kinds = {"names": terms[:17], "misspellings": terms[17:26], "paraphrases": terms[26:]}
    print(f"{'terms':<14} {'n':>3} {'accuracy@1':>10} {'explain top-3 from defining docs':>33}")
    for name, rows in [("all", terms), *kinds.items()]:
        scores = evaluate(base, rows, verbose=args.verbose and name == "all")
        print(f"{name:<14} {len(rows):>3} {scores['accuracy_at_1']:>10.3f} {scores['explain_top3_from_defining']:>33.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
