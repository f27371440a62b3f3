"""Concept quality on the bundled corpus, over bench/concepts_relevance.yaml: resolveConcept
accuracy@1 (targets >= 0.9) and the share of explainConcept's top-3 passages drawn from the term's
defining documents (target >= 0.8), by kind of term; plus extraction time beside indexing time.

    python -m bench.concepts [--set FILE] [--all-documents] [--docs PATH] [--verbose]
    python -m bench.concepts --public [--public-set NAME ...] [--verbose]
    python -m bench.concepts --public --public-set ansible        # the held-out set

With --docs (any corpus) only the timings and the concept counts are printed. The speed bench on a
50,000-passage corpus is bench/concepts_speed.py.

--public measures the public sets (bench/data/questions/*.yaml, their `concepts:` lists over
bench/data/corpora/*/docs) the way a client meets them: resolveConcept(term) through the MCP tools'
handlers, then explainConcept(the best id) — defining@1 is the share of terms whose FIRST passage comes
from one of the term's `defining` documents (version copies listed), defining@3 any of the first three;
a term resolveConcept answers with `resolved: false` counts as a miss, and is counted apart.
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
from .relevance_sets import ALL_SETS, PUBLIC_SETS

PUBLIC_QUESTIONS = Path(__file__).with_name("data") / "questions"

DEFAULT_SET = Path(__file__).with_name("concepts_relevance.yaml")
TOP = 3


def load_set(path: Path = DEFAULT_SET) -> tuple[list[dict[str, Any]], list[str]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data["terms"], data["judged_documents"]


def concept_base(index: KnowledgeIndex, embedder: PassageEmbedder, glossary: Glossary | None = None) -> ConceptBase:
    return build_concept_base(index.documents, index.passages, index.version, glossary or Glossary(),
                              embed_many=embedder.embed_many, dimension=embedder.dimension,
                              embed_query=index.embed_query, nearest_passages=index.nearest_passages,
                              pages=getattr(index, "pages", None))


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


class _BuiltKnowledge:
    """The knowledge port over one index already built: what ConceptService reads from the knowledge pack."""

    def __init__(self, index: KnowledgeIndex, embedder: PassageEmbedder) -> None:
        self._index = index
        self.embedder = embedder
        self.documents = index.documents

    def resource_uri(self, document_id: str) -> str:
        return f"knowledge://{document_id}"

    async def start(self) -> None:
        return None

    async def index(self) -> KnowledgeIndex:
        return self._index


def load_public_concepts(name: str) -> tuple[Path, list[dict[str, Any]]]:
    """A public set's corpus root and its `concepts:` rows (term, defining)."""
    data = yaml.safe_load((PUBLIC_QUESTIONS / f"{name}.yaml").read_text(encoding="utf-8"))
    return Path(__file__).resolve().parent.parent / data["corpus"], list(data.get("concepts") or ())


async def explain_terms(handlers: Any, terms: list[dict[str, Any]], verbose: bool = False) -> dict[str, Any]:
    """resolveConcept then explainConcept per term, as a client calls the tools; the share of terms whose
    first (any of the first TOP) passage is from a defining document, and how many did not resolve."""
    first = any_top = unresolved = 0
    for row in terms:
        found = await handlers.resolve_concept(row["term"])
        defining = set(row["defining"])
        documents: list[str] = []
        concept_id = found["items"][0]["id"] if found["items"] else None
        if not found["resolved"] or concept_id is None:
            unresolved += 1
        else:
            explained = await handlers.explain_concept(concept_id, TOP)
            documents = [item["documentId"] for item in explained["items"] if item["kind"] == "passage"]
        first += bool(documents) and documents[0] in defining
        any_top += bool(defining.intersection(documents[:TOP]))
        if verbose and not (documents and documents[0] in defining):
            print(f"  miss: {row['term']!r} -> {concept_id} ({'resolved' if found['resolved'] else 'unresolved'}): "
                  f"{documents[:TOP]}; defining {sorted(defining)[:3]}")
    total = len(terms) or 1
    return {"terms": len(terms), "defining_at_1": first / total, "defining_at_3": any_top / total,
            "unresolved": unresolved / total}


def measure_public(name: str, embedder: PassageEmbedder, verbose: bool = False) -> dict[str, Any]:
    """One public set: its index (passage vectors from the usual cache), the concept service over it, the terms."""
    import asyncio

    from hexmcp.tools.cache_dir import default_cache_dir
    from hexmcp.tools.concepts.mcp_tools import ConceptHandlers
    from hexmcp.tools.concepts.service import ConceptService

    root, terms = load_public_concepts(name)
    started = time.perf_counter()
    documents = load_documents(CorpusSpec(roots=[str(root)]))
    index = build_index(documents, embedder, new_store(embedder.dimension), cache_dir=default_cache_dir())
    indexing = time.perf_counter() - started
    service = ConceptService(_BuiltKnowledge(index, embedder))  # type: ignore[arg-type]
    handlers = ConceptHandlers(service)

    async def run() -> dict[str, Any]:
        await service.start()
        return await explain_terms(handlers, terms, verbose)

    scores = asyncio.run(run())
    stats = service.loaded.stats if service.loaded is not None else None
    return {"set": name, "documents": len(documents), "passages": len(index.passages),
            "indexing_seconds": round(indexing, 1), "concepts": stats.concepts if stats else 0,
            "concepts_seconds": stats.total_seconds if stats else 0.0,
            "extraction_seconds": stats.extraction_seconds if stats else 0.0, **scores}


def print_public(rows: list[dict[str, Any]]) -> None:
    print(f"{'set':<11} {'terms':>5} {'defining@1':>10} {'defining@3':>10} {'unresolved':>10} "
          f"{'docs':>5} {'concepts':>8} {'index s':>7} {'concepts s':>10} {'extract s':>9}")
    for row in rows:
        print(f"{row['set']:<11} {row['terms']:>5} {row['defining_at_1']:>10.3f} {row['defining_at_3']:>10.3f} "
              f"{row['unresolved']:>10.3f} {row['documents']:>5} {row['concepts']:>8} {row['indexing_seconds']:>7.1f} "
              f"{row['concepts_seconds']:>10.1f} {row['extraction_seconds']:>9.1f}")
    total = sum(r["terms"] for r in rows) or 1
    overall = {k: sum(r[k] * r["terms"] for r in rows) / total for k in ("defining_at_1", "defining_at_3", "unresolved")}
    print(f"{'overall':<11} {total:>5} {overall['defining_at_1']:>10.3f} {overall['defining_at_3']:>10.3f} "
          f"{overall['unresolved']:>10.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument("--docs", action="append", default=[], help="another corpus: timings and counts only")
    parser.add_argument("--all-documents", action="store_true", help="bundled corpus, newer documents included")
    parser.add_argument("--verbose", action="store_true", help="print every miss")
    parser.add_argument("--public", action="store_true", help="the public sets' concept terms (defining@1)")
    parser.add_argument("--public-set", action="append", default=[], choices=ALL_SETS,
                        help="with --public: one set (default: the four tuned ones; the held-out set only when named)")
    parser.add_argument("--json", type=Path, help="with --public: also write the figures here")
    args = parser.parse_args(argv)
    embedder = PassageEmbedder.load()
    if args.public:
        rows = []
        for name in args.public_set or PUBLIC_SETS:
            rows.append(measure_public(name, embedder, args.verbose))
            if args.verbose:
                print_public(rows[-1:])
        print_public(rows)
        if args.json:
            import json

            args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        return 0
    terms, judged = load_set(args.set)
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
