"""Retrieval quality: hexmcp's `search` beside three anchors measured in the same run.

    python -m bench.relevance [--set NAME ...] [--json FILE]      # the public sets (default: the four tuned)
    python -m bench.relevance --set ansible                       # the held-out set (measured, never tuned on)
    python -m bench.relevance --bundled [--all-documents] [--max-chars N] [--dense-weight W] [--bare-passages]

The public sets (bench/relevance_sets.py) are documentation corpora nobody here wrote, with questions
written by reading their pages: recall@1/5/10, MRR@10 and nDCG@10 for `search` (hybrid, one result per
page) and for the anchors BM25 (bm25s), MiniLM dense alone and reciprocal-rank fusion of the two, each a
plain ranking of documents by their best passage, as a tutorial would build it: one vector per passage, its
first 256 tokens (where `search` scores a longer passage by its best window, tools/knowledge/windows.py).

The bundled set (`--bundled`, bench/knowledge_relevance.yaml over hexmcp's own README and ADRs) also
scores `searchPassages`: a passage hit is relevant when it is in the question's document and its heading
path contains the question's `heading` (when given). It runs on the set's `judged_documents` (the documents
its answers were checked against); `--all-documents` adds every newer one as an unjudged distractor.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import yaml

from hexmcp.tools.knowledge import fusion
from hexmcp.tools.knowledge.builder import build_index, new_store
from hexmcp.tools.knowledge.chunking import DEFAULT_MAX_CHARS
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.embedder import PassageEmbedder
from hexmcp.tools.knowledge.fusion import Method
from hexmcp.tools.knowledge.retrieval import KnowledgeIndex
from hexmcp.tools.knowledge.vectors.memory import MemoryVectorStore
from hexmcp.tools.knowledge.windows import passage_of_row

DEFAULT_SET = Path(__file__).with_name("knowledge_relevance.yaml")
K = 5


def load_set(path: Path = DEFAULT_SET) -> tuple[list[dict[str, Any]], list[str]]:
    """The questions, and the ids of the documents they were judged against."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data["questions"], data["judged_documents"]


JUDGED_DOCUMENTS = Path(__file__).resolve().parent / "data" / "bundled-docs"
"""The judged documents as they were read when the sets were written (bench/data/bundled-docs/SOURCE.md)."""


def judged_corpus(judged: list[str]) -> list[Any]:
    """The judged documents, frozen as they were read (every one of them must be there)."""
    documents = {d.document_id: d for d in load_documents(CorpusSpec(roots=[str(JUDGED_DOCUMENTS)]))}
    missing = [d for d in judged if d not in documents]
    if missing:
        raise SystemExit(f"judged documents no longer in the bundled corpus: {missing}")
    return [documents[d] for d in judged]


def _passage_relevant(question: dict[str, Any], passage: Any) -> bool:
    heading = question.get("heading")
    return passage.document_id == question["document"] and (not heading or heading in passage.heading_path)


def evaluate(index: KnowledgeIndex, questions: list[dict[str, Any]], method: Method) -> dict[str, float]:
    doc_hits = doc_rr = passage_hits = passage_rr = 0.0
    for question in questions:
        documents = [h.document.document_id for h in index.search_documents(question["q"], 10, method=method)]
        if question["document"] in documents:
            rank = documents.index(question["document"]) + 1
            doc_hits += rank <= K
            doc_rr += 1 / rank
        passages = index.search_passages(question["q"], 10, method=method)
        ranks = [r for r, h in enumerate(passages, 1) if _passage_relevant(question, h.passage)]
        if ranks:
            passage_hits += ranks[0] <= K
            passage_rr += 1 / ranks[0]
    n = len(questions)
    return {"search_recall5": doc_hits / n, "search_mrr": doc_rr / n,
            "passages_recall5": passage_hits / n, "passages_mrr": passage_rr / n}


ANCHORS = (Method.LEXICAL, Method.DENSE, Method.RRF)


def window_rows(store: MemoryVectorStore) -> dict[str, list[np.ndarray]]:
    """Each passage's window vectors, in window order (the in-process store's slots keep insertion order)."""
    rows: dict[str, list[np.ndarray]] = {}
    for slot, row in enumerate(store._slot_passage):  # noqa: SLF001 - a bench reading the in-memory store
        if store._live[slot]:  # noqa: SLF001
            rows.setdefault(passage_of_row(row), []).append(store._matrix[slot])  # noqa: SLF001
    return rows


def first_window_index(index: KnowledgeIndex, store: MemoryVectorStore, embedder: PassageEmbedder) -> KnowledgeIndex:
    """The same passages with one vector each, their first window's: what a tutorial's MiniLM retrieval embeds
    (the encoder truncates at its window), read from the built store rather than embedded twice."""
    rows = window_rows(store)
    first = MemoryVectorStore(embedder.dimension)
    first.upsert([p.passage_id for p in index.passages], np.stack([rows[p.passage_id][0] for p in index.passages]),
                 [p.document_id for p in index.passages])
    return KnowledgeIndex(list(index.documents.values()), index.passages, embedder.embed, first, index.version)


def rank_public(index: KnowledgeIndex, text: str, method: Method, distinct: bool) -> list[str]:
    return [h.document.document_id for h in index.search_documents(text, 10, method=method, distinct=distinct)]


def score_systems(systems: dict[str, tuple[KnowledgeIndex, Method, bool]], questions: Any,
                  page_of: Callable[[str], str]) -> dict[str, dict[str, float]]:
    """Each system's mean measures over `questions`: (index, method, distinct pages) per system."""
    from . import relevance_sets

    return {system: relevance_sets.mean_scores([relevance_sets.score_ranking(
                rank_public(searched, q.text, method, distinct), q.answers, page_of) for q in questions])
            for system, (searched, method, distinct) in systems.items()}


def print_systems(systems: dict[str, dict[str, float]], width: int = 8) -> None:
    from .relevance_sets import MEASURES

    print(f"{'system':<{width}} " + " ".join(f"{m:>9}" for m in MEASURES))
    for system, scores in systems.items():
        print(f"{system:<{width}} " + " ".join(f"{scores[m]:>9.3f}" for m in MEASURES))


def run_public_sets(description: str, measure: Callable[[str, PassageEmbedder, Path], dict[str, Any]],
                    print_result: Callable[[dict[str, Any]], None], argv: list[str] | None,
                    parser: argparse.ArgumentParser | None = None) -> int:
    """The command line of an ablation over the public sets: `--set NAME ...` (default: all) and `--json FILE`,
    added to `parser` if the ablation has flags of its own (so `--help` lists them too)."""
    from hexmcp.tools.cache_dir import default_cache_dir

    from .relevance_sets import ALL_SETS, PUBLIC_SETS

    parser = parser or argparse.ArgumentParser(description=description)
    parser.add_argument("--set", dest="sets", action="append", default=[], choices=ALL_SETS,
                        help="a public set (default: the four tuned ones; the held-out set only when named)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    embedder = PassageEmbedder.load()
    results = []
    for name in args.sets or PUBLIC_SETS:
        results.append(measure(name, embedder, default_cache_dir()))
        print_result(results[-1])
    if args.json:
        import json

        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


def built_public_set(name: str, embedder: PassageEmbedder, cache_dir: Path) -> tuple[Any, KnowledgeIndex, KnowledgeIndex]:
    """A public set, its served index (vectors from the cache) and the anchors' first-window index over it."""
    from . import relevance_sets

    relevance_set = relevance_sets.load_public_set(name)
    documents = load_documents(CorpusSpec(roots=[str(relevance_set.corpus)]))
    store = new_store(embedder.dimension)
    index = build_index(documents, embedder, store, cache_dir=cache_dir)
    return relevance_set, index, first_window_index(index, store, embedder)


def run_public_sets_with_switch(description: str, switch: str, switch_help: str,
                                measure: Callable[[str, PassageEmbedder, Path, bool], dict[str, Any]],
                                print_result: Callable[[dict[str, Any]], None], argv: list[str] | None) -> int:
    """`run_public_sets` for an ablation with one on/off flag of its own (`--explain`, `--timing`): read before the
    sets run, handed to `measure` as its fourth argument, and listed by `--help` with the common flags."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(switch, action="store_true", help=switch_help)
    early = argparse.ArgumentParser(add_help=False)  # read before the sets run; the full parser checks the rest
    early.add_argument(switch, dest="on", action="store_true")
    on = early.parse_known_args(argv)[0].on
    return run_public_sets(description, lambda n, e, c: measure(n, e, c, on), print_result, argv, parser=parser)


def measure_public(name: str, embedder: PassageEmbedder, cache_dir: Path | None, levers: bool = False,
                   max_chars: int = DEFAULT_MAX_CHARS) -> dict[str, Any]:
    """One public set: the index built once, then every system's measures over its questions."""
    from . import relevance_sets

    relevance_set = relevance_sets.load_public_set(name)
    started = time.perf_counter()
    documents = load_documents(CorpusSpec(roots=[str(relevance_set.corpus)]))
    store = new_store(embedder.dimension)
    index = build_index(documents, embedder, store, cache_dir=cache_dir, max_chars=max_chars)
    built = time.perf_counter() - started
    anchor = first_window_index(index, store, embedder)
    systems: dict[str, tuple[KnowledgeIndex, Method, bool]] = {"hexmcp": (index, Method.HYBRID, True),
                                                               **{m.value: (anchor, m, False) for m in ANCHORS}}
    if levers:  # each lever alone: fusion without distinct pages, distinct pages without hybrid fusion
        systems.update({"hybrid": (index, Method.HYBRID, False), "dense+d": (index, Method.DENSE, True),
                        "rrf+d": (index, Method.RRF, True), "first win": (anchor, Method.HYBRID, True)})
    page_of = lambda d: index.pages.page(d).key  # noqa: E731 - one line, used once
    results: dict[str, Any] = {"set": name, "documents": len(documents), "passages": len(index.passages),
                               "vectors": len(store), "questions": len(relevance_set.questions),
                               "build_seconds": round(built, 1)}
    results["systems"] = score_systems(systems, relevance_set.questions, page_of)
    return results


def print_public(results: dict[str, Any]) -> None:
    print(f"\n{results['set']}: {results['documents']} documents, {results['passages']} passages "
          f"({results['vectors']} window vectors), {results['questions']} questions "
          f"(built in {results['build_seconds']} s)")
    print_systems(results["systems"])
    anchors = {s: v for s, v in results["systems"].items() if s in {m.value for m in ANCHORS}}
    best = max(anchors, key=lambda s: anchors[s]["recall@5"])
    lead = results["systems"]["hexmcp"]["recall@5"] - anchors[best]["recall@5"]
    print(f"hexmcp recall@5 {lead:+.3f} against the best anchor ({best})")


def main(argv: list[str] | None = None) -> int:
    from .relevance_sets import ALL_SETS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="sets", action="append", default=[], choices=ALL_SETS,
                        help="a public set (default: the four tuned ones; the held-out set only when named)")
    parser.add_argument("--json", type=Path, help="also write the public sets' figures here")
    parser.add_argument("--levers", action="store_true", help="also each lever alone (ablation rows)")
    parser.add_argument("--bundled", action="store_true", help="the bundled set over hexmcp's own documents")
    parser.add_argument("--docs", action="append", default=[], help="bundled mode: corpus roots instead")
    parser.add_argument("--bundled-set", type=Path, default=DEFAULT_SET, help="bundled mode: the set (YAML)")
    parser.add_argument("--all-documents", action="store_true",
                        help="bundled mode: add the documents newer than the set's judgements")
    parser.add_argument("--max-chars", type=int, default=DEFAULT_MAX_CHARS)
    parser.add_argument("--dense-weight", type=float, default=fusion.DENSE_WEIGHT)
    parser.add_argument("--quantization", choices=["int8", "fp32"],
                        help="the passage and query encoder's precision (default: the knowledge pack's)")
    parser.add_argument("--bare-passages", action="store_true",
                        help="ablation: index passage text alone, without the title and heading path")
    args = parser.parse_args(argv)
    if args.bare_passages:
        from hexmcp.tools.knowledge.passages import Passage

        Passage.indexed_text = lambda self: self.text  # type: ignore[method-assign]
    embedder = PassageEmbedder.load(**({"quantization": args.quantization} if args.quantization else {}))
    if not args.bundled:
        from hexmcp.tools.cache_dir import default_cache_dir

        from .relevance_sets import PUBLIC_SETS

        all_results = []
        for name in args.sets or PUBLIC_SETS:
            results = measure_public(name, embedder, default_cache_dir(), args.levers, args.max_chars)
            print_public(results)
            all_results.append(results)
        if args.json:
            import json

            args.json.write_text(json.dumps(all_results, indent=2) + "\n", encoding="utf-8")
        return 0
    questions, judged = load_set(args.bundled_set)
    started = time.perf_counter()
    if args.docs or args.all_documents:
        documents = load_documents(CorpusSpec(roots=args.docs))
    else:
        documents = judged_corpus(judged)
    index = build_index(documents, embedder, new_store(embedder.dimension), max_chars=args.max_chars)
    print(f"{len(documents)} documents, {len(index.passages)} passages, {len(questions)} questions, "
          f"built in {time.perf_counter() - started:.1f} s (max_chars={args.max_chars}, "
          f"dense_weight={args.dense_weight})")
    index.dense_weight = args.dense_weight
    print(f"{'method':<8} {'search R@5':>10} {'search MRR':>10} {'passages R@5':>12} {'passages MRR':>12}")
    for method in Method:
        scores = evaluate(index, questions, method)
        print(f"{method.value:<8} {scores['search_recall5']:>10.3f} {scores['search_mrr']:>10.3f} "
              f"{scores['passages_recall5']:>12.3f} {scores['passages_mrr']:>12.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
