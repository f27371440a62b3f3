"""Retrieval quality on the bundled corpus: recall@5 and MRR for lexical, dense, RRF and hybrid,
for `search` (documents) and `searchPassages` (passages), over bench/knowledge_relevance.yaml.

    python -m bench.relevance [--docs PATH] [--set FILE] [--all-documents] [--max-chars N] [--dense-weight W]
                              [--bare-passages]

On the bundled corpus the measurement runs on the set's `judged_documents` (the documents its answers
were checked against); `--all-documents` adds every newer one as an unjudged distractor.

Relevance: a document hit is relevant when it is the question's document; a passage hit when it is
in that document and its heading path contains the question's `heading` (when given).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from hexmcp.tools.knowledge import fusion
from hexmcp.tools.knowledge.builder import build_index, new_store
from hexmcp.tools.knowledge.chunking import DEFAULT_MAX_CHARS
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.embedder import PassageEmbedder
from hexmcp.tools.knowledge.fusion import Method
from hexmcp.tools.knowledge.retrieval import KnowledgeIndex

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", action="append", default=[], help="corpus root (default: the bundled docs)")
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="relevance set (YAML)")
    parser.add_argument("--all-documents", action="store_true",
                        help="bundled corpus: add the documents newer than the set's judgements")
    parser.add_argument("--max-chars", type=int, default=DEFAULT_MAX_CHARS)
    parser.add_argument("--dense-weight", type=float, default=fusion.DENSE_WEIGHT)
    parser.add_argument("--bare-passages", action="store_true",
                        help="ablation: index passage text alone, without the title and heading path")
    args = parser.parse_args(argv)
    if args.bare_passages:
        from hexmcp.tools.knowledge.passages import Passage

        Passage.indexed_text = lambda self: self.text  # type: ignore[method-assign]
    questions, judged = load_set(args.set)
    started = time.perf_counter()
    embedder = PassageEmbedder.load()
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
