"""Ablation: dense evidence beyond a passage's windows, and a query-side linear adapter, in one run over the
public sets beside the served pipeline and the three anchors.

    python -m bench.relevance_evidence [--set NAME ...] [--json FILE]

Levers (issue 29: task-phrased questions in words the page does not use), each with hybrid fusion and
distinct pages as `search` serves them, beside `served` (the index as built) and the three anchors:
- **sentence evidence**: a vector per sentence of every passage (its title and heading path in front, as a
  window has; code blocks and units of fewer than four words left out), and a passage's dense score from its
  best window and its best sentence: the larger of the window's cosine and α × the sentence's (`sent max α`),
  or a mix (`sent mix β`: (1 − β) window + β sentence). `span2`/`span3`: the same with a vector per two or
  three adjacent sentences (the normalised sum of their vectors).
- **document centroid**: the passage's best window plus γ × the cosine of its document's centroid (the
  normalised mean of its window rows; nothing more to embed).
- **query adapter**: a linear map of the query vector, fitted per corpus by ridge regression toward the
  identity (λ a multiple of the mean eigenvalue) on pairs the corpus gives without any question: each
  heading (embedded as a query) → the vector of the first passage under it; `d`: one pair per page and
  heading path (versioned copies once), labels heading three pages or more left out; `s`: each passage's first
  sentence, bare, → the passage (one pair per place in a page); `ds`: both. Never fitted on the evaluation
  questions or answers.
- **question frame stripped**: the query embedded without a leading "how do I" / "what is" / "is there a
  way to" (a question's frame carries no topic).
`windows (exact)` re-scores the served index through the same replacement of its dense search, so every
lever differs from it by the lever alone (it reproduces `served`).

Sentence vectors are embedded once per set and kept under the cache directory (`evidence-lever/`), keyed by
the model and the sentences' texts. Every dense score is exact (a matrix product over every row), which is
what the in-process store does at these sizes. The figures: bench/diaries/knowledge.md.
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from hexmcp.tools.knowledge.builder import build_index, new_store
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.embedder import PassageEmbedder
from hexmcp.tools.knowledge.fusion import Method
from hexmcp.tools.knowledge.passages import Passage
from hexmcp.tools.knowledge.retrieval import KnowledgeIndex

from . import relevance_sets
from .relevance import ANCHORS, first_window_index, print_systems, run_public_sets, score_systems, window_rows

_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[*])")
_WORD = re.compile(r"[A-Za-z]{2,}")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")  # a Markdown link embeds as its text: a URL is no evidence
MIN_WORDS = 4  # a unit of fewer words (a lone code line, a label) is no sentence
GENERIC_PAGES = 3  # a heading over this many pages' sections ("Example", "Options") names no topic
_FRAME = re.compile(r"^(?:how (?:do|can|should|would) (?:i|we|you)|how to|what (?:is|are|does|do)|"
                    r"is there (?:a|any) (?:way|option|setting) to|can i|why (?:does|do|is|are)|"
                    r"where (?:do|can|does) (?:i|we)?)\s+", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """The passage body's sentences: paragraphs (hard-wrapped lines joined) and list items, cut at sentence ends;
    code fences and units of fewer than MIN_WORDS words are left out."""
    units: list[str] = []
    paragraph: list[str] = []
    fenced = False

    def flush() -> None:
        if paragraph:
            units.extend(_SENTENCE_END.split(" ".join(paragraph)))
            paragraph.clear()

    for line in text.splitlines():
        if line.strip().startswith(("```", "~~~")):
            flush()
            fenced = not fenced
            continue
        if fenced or not line.strip():
            flush()
            continue
        if _LIST_ITEM.match(line) or line.lstrip().startswith(("#", "|", ">")):
            flush()
        paragraph.append(line.strip())
    flush()
    units = [_LINK.sub(r"\1", u).strip() for u in units]
    return [u for u in units if len(_WORD.findall(u)) >= MIN_WORDS]


def context_of(passage: Passage) -> str:
    first = passage.indexed_text()
    return first[: len(first) - len(passage.text)]


def embedded_once(name: str, kind: str, texts: list[str], embedder: PassageEmbedder, cache_dir: Path) -> np.ndarray:
    """`texts`' vectors, from the cache when held (keyed by the model and the texts)."""
    digest = hashlib.sha256(embedder.model_key.encode())
    for text in texts:
        digest.update(text.encode("utf-8") + b"\x1f")
    path = cache_dir / "evidence-lever" / f"{name}-{kind}-{digest.hexdigest()[:24]}.npy"
    if path.exists():
        return np.load(path)
    started = time.perf_counter()
    vectors = embedder.embed_many(texts)
    print(f"  {name}: embedded {len(texts)} {kind} in {time.perf_counter() - started:.1f} s", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def sentence_vectors(name: str, passages: list[Passage], embedder: PassageEmbedder,
                     cache_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    """(vectors of every passage's sentences, passage by passage; each passage's count)."""
    texts: list[str] = []
    counts = np.zeros(len(passages), dtype=np.int64)
    for n, passage in enumerate(passages):
        found = [context_of(passage) + s for s in sentences(passage.text)]
        counts[n] = len(found)
        texts.extend(found)
    return embedded_once(name, "sentences", texts, embedder, cache_dir), counts


def first_sentence_pairs(name: str, index: KnowledgeIndex, windows: GroupedRows, embedder: PassageEmbedder,
                         cache_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    """Each passage's first sentence, bare (no title or heading: a query has none), embedded as a query → the
    passage's first window; one pair per place in a page, so versioned copies count once. From the corpus alone."""
    chosen: dict[tuple, tuple[str, int]] = {}
    for n, passage in enumerate(index.passages):
        found = sentences(passage.text)
        if found:
            chosen.setdefault(index._place[n], (found[0], n))  # noqa: SLF001 - (page, headings, ordinal)
    texts = [text for text, _ in chosen.values()]
    targets = np.stack([windows.vectors[windows.starts[n]] for _, n in chosen.values()])
    return embedded_once(name, "first-sentences", texts, embedder, cache_dir), targets


def span_vectors(vectors: np.ndarray, counts: np.ndarray, width: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Each passage's runs of `width` adjacent sentences as normalised sums (a shorter passage: all of them)."""
    spans, span_counts, start = [], np.zeros_like(counts), 0
    for n, count in enumerate(counts.tolist()):
        own = vectors[start:start + count]
        start += count
        if count > width:
            pairs = sum(own[k:count - width + 1 + k] for k in range(width))
        else:
            pairs = own.sum(axis=0, keepdims=True) if count else own
        spans.append(pairs)
        span_counts[n] = len(pairs)
    stacked = np.concatenate(spans) if spans else np.zeros((0, vectors.shape[1]), dtype=np.float32)
    norms = np.linalg.norm(stacked, axis=1, keepdims=True)
    return (stacked / np.where(norms > 0, norms, 1.0)).astype(np.float32), span_counts


class GroupedRows:
    """Rows grouped by passage (counts in passage order): each passage's best cosine with a query vector."""

    def __init__(self, vectors: np.ndarray, counts: np.ndarray) -> None:
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.held = counts > 0
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]])[self.held]

    def best(self, query: np.ndarray, missing: float = -1.0) -> np.ndarray:
        scores = np.full(len(self.held), missing, dtype=np.float32)
        if len(self.vectors):
            scores[self.held] = np.maximum.reduceat(self.vectors @ query, self.starts)
        return scores


class EvidenceIndex(KnowledgeIndex):
    """The served index with its dense score replaced: `dense(query vector)` → every passage's score."""

    dense: Callable[[np.ndarray], np.ndarray]
    query_map: Callable[[np.ndarray], np.ndarray] = staticmethod(lambda v: v)

    def _nearest(self, vector: np.ndarray, limit: int, filters: dict) -> list[tuple[int, float]]:
        scores = self.dense(self.query_map(vector))
        top = np.argsort(-scores, kind="stable")[:limit]
        return [(int(i), float(scores[i])) for i in top]


def fit_adapter(queries: np.ndarray, targets: np.ndarray, strength: float) -> np.ndarray:
    """W minimising ‖QW − T‖² + λ‖W − I‖², λ = strength × the mean eigenvalue of QᵀQ."""
    gram = queries.T @ queries
    lam = strength * float(np.trace(gram)) / gram.shape[0]
    eye = np.eye(gram.shape[0], dtype=np.float64)
    return np.linalg.solve(gram + lam * eye, queries.T @ targets + lam * eye).astype(np.float32)


def heading_pairs(index: KnowledgeIndex, windows: GroupedRows, embedder: PassageEmbedder,
                  distinct: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Each (document, heading path)'s last heading (or the title) embedded as a query → its first passage's
    first window. Built from the corpus alone. `distinct`: one pair per (page, heading path), so a page's
    versioned copies count once, and no label that heads sections of GENERIC_PAGES pages or more ("Example",
    "Options": a label so common names no topic)."""
    first: dict[tuple[str, tuple[str, ...]], int] = {}
    for n, passage in enumerate(index.passages):
        where = index.pages.page(passage.document_id).key if distinct else passage.document_id
        first.setdefault((where, passage.headings), n)
    labelled = [((headings[-1] if headings else index.passages[n].title), n) for (_, headings), n in first.items()]
    labelled = [(label, n) for label, n in labelled if _WORD.search(label)]
    if distinct:
        pages_of: dict[str, set[str]] = {}
        for (where, headings), n in first.items():
            label = headings[-1] if headings else index.passages[n].title
            pages_of.setdefault(label.strip().lower(), set()).add(where)
        labelled = [(label, n) for label, n in labelled if len(pages_of[label.strip().lower()]) < GENERIC_PAGES]
    targets = [windows.vectors[windows.starts[n]] for _, n in labelled]
    return embedder.embed_many([label for label, _ in labelled]), np.stack(targets)


def normalised(matrix: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    def apply(vector: np.ndarray) -> np.ndarray:
        mapped = vector @ matrix
        return mapped / max(float(np.linalg.norm(mapped)), 1e-9)
    return apply


def measure(name: str, embedder: PassageEmbedder, cache_dir: Path) -> dict[str, Any]:
    relevance_set = relevance_sets.load_public_set(name)
    documents = load_documents(CorpusSpec(roots=[str(relevance_set.corpus)]))
    store = new_store(embedder.dimension)
    index = build_index(documents, embedder, store, cache_dir=cache_dir)
    passages = index.passages
    rows = window_rows(store)
    window_counts = np.array([len(rows[p.passage_id]) for p in passages])
    windows = GroupedRows(np.concatenate([np.stack(rows[p.passage_id]) for p in passages]), window_counts)
    started = time.perf_counter()
    sentence_matrix, sentence_counts = sentence_vectors(name, passages, embedder, cache_dir)
    sentence_seconds = time.perf_counter() - started
    sents = GroupedRows(sentence_matrix, sentence_counts)
    spans = GroupedRows(*span_vectors(sentence_matrix, sentence_counts))
    spans3 = GroupedRows(*span_vectors(sentence_matrix, sentence_counts, 3))
    # Each document's centroid: the normalised mean of its window rows (no extra embedding).
    document_of = np.array([index._document_number[p.document_id] for p in passages])  # noqa: SLF001
    row_document = np.repeat(document_of, window_counts)
    centroids = np.zeros((len(index.documents), embedder.dimension), dtype=np.float32)
    np.add.at(centroids, row_document, windows.vectors)
    centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-9)
    pair_queries, pair_targets = heading_pairs(index, windows, embedder)
    distinct_queries, distinct_targets = heading_pairs(index, windows, embedder, distinct=True)
    first_queries, first_targets = first_sentence_pairs(name, index, windows, embedder, cache_dir)
    both_queries, both_targets = (np.concatenate([distinct_queries, first_queries]),
                                  np.concatenate([distinct_targets, first_targets]))

    def view(dense: Callable[[np.ndarray], np.ndarray], query_map: Callable | None = None) -> EvidenceIndex:
        evidence = EvidenceIndex(list(index.documents.values()), passages, embedder.embed, store, index.version)
        evidence.dense = dense  # type: ignore[method-assign]
        if query_map is not None:
            evidence.query_map = query_map  # type: ignore[method-assign]
        return evidence

    def max_of(alpha: float, rows_: GroupedRows) -> Callable[[np.ndarray], np.ndarray]:
        return lambda q: np.maximum(windows.best(q), alpha * rows_.best(q))

    def centroid_of(gamma: float) -> Callable[[np.ndarray], np.ndarray]:
        return lambda q: windows.best(q) + gamma * (centroids @ q)[document_of]

    def mix_of(beta: float, rows_: GroupedRows) -> Callable[[np.ndarray], np.ndarray]:
        def dense(q: np.ndarray) -> np.ndarray:
            best_sentence = rows_.best(q, missing=np.nan)
            win = windows.best(q)
            return np.where(np.isnan(best_sentence), win, (1 - beta) * win + beta * best_sentence)
        return dense

    stripped_cache: dict[str, np.ndarray] = {}

    def embed_stripped(text: str) -> np.ndarray:
        if text not in stripped_cache:
            stripped_cache[text] = embedder.embed(_FRAME.sub("", text, count=1) or text)
        return stripped_cache[text]

    anchor = first_window_index(index, store, embedder)
    systems: dict[str, tuple[KnowledgeIndex, Method, bool]] = {
        "served": (index, Method.HYBRID, True), **{m.value: (anchor, m, False) for m in ANCHORS},
        "windows (exact)": (view(windows.best), Method.HYBRID, True),
        "sent max 1.0": (view(max_of(1.0, sents)), Method.HYBRID, True),
        "sent max 0.95": (view(max_of(0.95, sents)), Method.HYBRID, True),
        "sent mix 0.3": (view(mix_of(0.3, sents)), Method.HYBRID, True),
        "sent mix 0.5": (view(mix_of(0.5, sents)), Method.HYBRID, True),
        "span2 max 1.0": (view(max_of(1.0, spans)), Method.HYBRID, True),
        "span2 mix 0.3": (view(mix_of(0.3, spans)), Method.HYBRID, True),
        "span3 max 1.0": (view(max_of(1.0, spans3)), Method.HYBRID, True),
        "centroid 0.1": (view(centroid_of(0.1)), Method.HYBRID, True),
        "centroid 0.2": (view(centroid_of(0.2)), Method.HYBRID, True),
        "adapter λ1": (view(windows.best, normalised(fit_adapter(pair_queries, pair_targets, 1.0))), Method.HYBRID, True),
        "adapter λ0.3": (view(windows.best, normalised(fit_adapter(pair_queries, pair_targets, 0.3))), Method.HYBRID, True),
        "adapter λ0.1": (view(windows.best, normalised(fit_adapter(pair_queries, pair_targets, 0.1))), Method.HYBRID, True),
        "adapter λ3": (view(windows.best, normalised(fit_adapter(pair_queries, pair_targets, 3.0))), Method.HYBRID, True),
        "adapter d λ1": (view(windows.best, normalised(fit_adapter(distinct_queries, distinct_targets, 1.0))),
                         Method.HYBRID, True),
        "adapter d λ3": (view(windows.best, normalised(fit_adapter(distinct_queries, distinct_targets, 3.0))),
                         Method.HYBRID, True),
        "adapter s λ1": (view(windows.best, normalised(fit_adapter(first_queries, first_targets, 1.0))),
                         Method.HYBRID, True),
        "adapter s λ3": (view(windows.best, normalised(fit_adapter(first_queries, first_targets, 3.0))),
                         Method.HYBRID, True),
        "adapter ds λ3": (view(windows.best, normalised(fit_adapter(both_queries, both_targets, 3.0))),
                          Method.HYBRID, True),
    }
    stripped = view(windows.best)
    stripped._embed_query = embed_stripped  # noqa: SLF001 - the lever replaces the query encoder
    systems["frame stripped"] = (stripped, Method.HYBRID, True)
    page_of = lambda d: index.pages.page(d).key  # noqa: E731 - one line, used once
    return {"set": name, "passages": len(passages), "window_rows": len(windows.vectors),
            "sentence_rows": len(sentence_matrix), "sentence_seconds": round(sentence_seconds, 1),
            "heading_pairs": len(pair_queries), "distinct_pairs": len(distinct_queries),
            "first_sentence_pairs": len(first_queries),
            "questions": len(relevance_set.questions),
            "systems": score_systems(systems, relevance_set.questions, page_of)}


def print_result(result: dict[str, Any]) -> None:
    print(f"\n{result['set']}: {result['passages']} passages, {result['window_rows']} window rows, "
          f"{result['sentence_rows']} sentence rows ({result['sentence_seconds']} s), "
          f"{result['heading_pairs']} heading pairs ({result['distinct_pairs']} distinct), "
          f"{result['first_sentence_pairs']} first-sentence pairs, {result['questions']} questions")
    print_systems(result["systems"], width=16)


def main(argv: list[str] | None = None) -> int:
    return run_public_sets(__doc__.splitlines()[0], measure, print_result, argv)


if __name__ == "__main__":
    sys.exit(main())
