"""Passages (+ glossary) → ConceptBase: extract evidence per document, draft and de-duplicate
concepts, find every passage that mentions each, summarise them from the corpus, relate them.

Incremental where it is cheap: a document's evidence is cached by its content, so after an
index change only changed documents are read again, and title vectors are cached by title, so only
new titles are embedded. Mentions, relations and the graph are rebuilt whole: they are linear scans
and cheap beside extraction.
"""

from __future__ import annotations

import collections
import hashlib
import time
from typing import Callable, Mapping, Sequence

import numpy as np

from hexmcp.tools.ports import KnowledgeDocument, KnowledgePassage

from .base import BuildStats, ConceptBase, EmbedQuery, NearestPassages, Support
from .dedup import Draft, draft_concepts
from .defining import PageCatalog, defining_strengths, fold_copies, places
from .extraction import extract
from .glossary import Glossary
from .graph import ConceptGraph
from .mentions import AliasIndex
from .model import Citation, Concept, Evidence, EvidenceKind
from . import relations
from .text import sentences, tokens, words

MAX_SUMMARY_CHARS = 300
EmbedMany = Callable[[list[str]], np.ndarray]
#: Told after each document's evidence is in: (documents read afresh so far, documents in all). /health's
#: progress for the extraction, the build's longest step on a cold start.
DocumentRead = Callable[[int, int], None]
#: Called from the build thread between documents and, in the steps that relate concepts, every few
#: hundred passages or concepts; whatever it raises stops the build there (the service's stop at SIGTERM:
#: a thread cannot be killed, and the interpreter waits for it before exiting).
Checkpoint = Callable[[], None]
_EMBED_SLICE = 256  # titles embedded between two checkpoints
_SCAN_SLICE = 256  # passages scanned between two checkpoints


def _never_stop() -> None:
    pass


class EvidenceCache:
    """Evidence per document, keyed by its content, and title vectors keyed by title: what a rebuild reuses."""

    def __init__(self) -> None:
        self.evidence: dict[tuple[str, str], tuple[Evidence, ...]] = {}
        self.vectors: dict[str, np.ndarray] = {}

    def evidence_of(self, document: KnowledgeDocument, passages: Sequence[KnowledgePassage],
                    corpus_ids: frozenset[str]) -> tuple[tuple[Evidence, ...], bool]:
        key = (document.document_id, hashlib.sha256(document.text.encode()).hexdigest() + str(len(passages)))
        if key in self.evidence:
            return self.evidence[key], False
        found = extract(document, passages, corpus_ids)
        self.evidence[key] = found
        return found, True

    def embed(self, titles: list[str], embed_many: EmbedMany, dimension: int) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in titles if t not in self.vectors))
        if missing:
            for title, vector in zip(missing, embed_many(missing)):
                self.vectors[title] = np.asarray(vector, dtype=np.float32)
        if not titles:
            return np.zeros((0, dimension), dtype=np.float32)
        return np.stack([self.vectors[t] for t in titles])

    def forget_except(self, documents: Mapping[str, KnowledgeDocument]) -> None:
        """Drop evidence of documents that are gone or changed, so the cache never outgrows the corpus."""
        live = {(d.document_id, hashlib.sha256(d.text.encode()).hexdigest()) for d in documents.values()}
        self.evidence = {k: v for k, v in self.evidence.items() if (k[0], k[1][:64]) in live}


def build_concept_base(documents: Mapping[str, KnowledgeDocument], passages: Sequence[KnowledgePassage],
                       index_version: str, glossary: Glossary, *, embed_many: EmbedMany, dimension: int,
                       embed_query: EmbedQuery | None = None, nearest_passages: NearestPassages | None = None,
                       cache: EvidenceCache | None = None, pages: PageCatalog | None = None,
                       progress: DocumentRead | None = None, checkpoint: Checkpoint = _never_stop) -> ConceptBase:
    """`pages` groups the copies of one page (the knowledge index's catalogue): they count once.
    `progress` is told after each document's evidence is in (DocumentRead); `checkpoint` may stop the
    build at any of its calls (Checkpoint)."""
    started = time.perf_counter()
    cache = cache or EvidenceCache()
    cache.forget_except(documents)
    by_document: dict[str, list[KnowledgePassage]] = collections.defaultdict(list)
    for passage in passages:
        by_document[passage.document_id].append(passage)
    evidence, extracted = _evidence(documents, by_document, cache, progress, checkpoint)
    extraction_seconds = time.perf_counter() - started

    def embed_titles(titles: list[str]) -> np.ndarray:
        parts = []
        for start in range(0, len(titles), _EMBED_SLICE):
            checkpoint()
            parts.append(cache.embed(titles[start:start + _EMBED_SLICE], embed_many, dimension))
        return np.concatenate(parts) if parts else cache.embed([], embed_many, dimension)

    page_of = (lambda d: pages.page(d).key) if pages is not None else None  # noqa: E731 - used once, below
    drafts = draft_concepts(evidence, glossary, len(by_document), embed_titles, page_of)
    checkpoint()
    index = AliasIndex((d.id, name) for d in drafts for name in (d.title, *d.aliases))
    counts, passage_concepts = _mentions(index, passages, checkpoint)
    checkpoint()
    defining = defining_strengths(drafts, passages)
    place = places(passages, pages)
    preference = {d: pages.page(d).documents.index(d) for d in by_document} if pages is not None else {}
    frequency = {d.id: len(counts.get(d.id, ())) for d in drafts}
    kept = [d for d in drafts if d.glossary is not None or frequency[d.id] >= 2
            or any(e.kind in relations.DEFINING_KINDS for e in d.evidence)]
    by_id = {p.passage_id: p for p in passages}
    support = {}
    for number, draft in enumerate(kept):
        if number % _SCAN_SLICE == 0:
            checkpoint()
        support[draft.id] = _support(counts.get(draft.id, {}), defining.get(draft.id, {}), passages, by_id, place,
                                     preference)
    checkpoint()
    concepts = [_concept(d, documents, by_id, support[d.id], index_version) for d in kept]
    vectors = embed_titles([c.title for c in concepts])
    graph = _graph(kept, concepts, documents, passage_concepts, frequency, vectors, checkpoint)
    checkpoint()
    glossary_digest = hashlib.sha256(repr(glossary.entries).encode()).hexdigest()[:8]
    stats = BuildStats(documents=len(by_document), passages=len(passages), evidence=len(evidence),
                       concepts=len(concepts), edges=graph.graph.number_of_edges(), extracted_documents=extracted,
                       extraction_seconds=round(extraction_seconds, 3),
                       total_seconds=round(time.perf_counter() - started, 3))
    return ConceptBase(version=f"{index_version}+{glossary_digest}", index_version=index_version, concepts=concepts,
                       vectors=vectors, support=support, frequency={d.id: frequency[d.id] for d in kept},
                       passages_total=len(passages),
                       aliases=AliasIndex((c.id, name) for c in concepts for name in (c.title, *c.aliases)),
                       graph=graph, embed_query=embed_query, nearest_passages=nearest_passages, stats=stats,
                       representative=_representatives(passages, place, preference))


def _evidence(documents: Mapping[str, KnowledgeDocument], by_document: Mapping[str, list[KnowledgePassage]],
              cache: EvidenceCache, progress: DocumentRead | None = None, checkpoint: Checkpoint = _never_stop
              ) -> tuple[list[Evidence], int]:
    """Every document's evidence, in document order, and how many documents were read afresh (not cached)."""
    corpus_ids = frozenset(documents)
    evidence: list[Evidence] = []
    extracted = 0
    for document_id in sorted(by_document):
        checkpoint()
        found, fresh = cache.evidence_of(documents[document_id], by_document[document_id], corpus_ids)
        evidence.extend(found)
        extracted += fresh
        if progress is not None:
            progress(extracted, len(by_document))
    return evidence, extracted


def _graph(kept: Sequence[Draft], concepts: Sequence[Concept], documents: Mapping[str, KnowledgeDocument],
           passage_concepts: list[set[str]], frequency: Mapping[str, int], vectors: np.ndarray,
           checkpoint: Checkpoint = _never_stop) -> ConceptGraph:
    """The concepts and the documents as nodes, with every kind of derived or glossary edge between them
    (`passage_concepts`: the concepts each passage mentions, those not kept included)."""
    kept_ids = {d.id for d in kept}
    edges = [*relations.glossary_edges(kept, kept_ids), *relations.defined_in_edges(kept),
             *relations.heading_edges(kept), *relations.link_edges(kept)]
    checkpoint()
    edges.extend(relations.co_occurrence_edges([present & kept_ids for present in passage_concepts], frequency))
    checkpoint()
    edges.extend(relations.similarity_edges([c.id for c in concepts], vectors))
    checkpoint()
    nodes = {c.id: ("concept", c.title) for c in concepts}
    nodes.update({relations.document_node(d.document_id): ("document", d.title) for d in documents.values()})
    return ConceptGraph(nodes, edges)


def _mentions(index: AliasIndex, passages: Sequence[KnowledgePassage], checkpoint: Checkpoint = _never_stop
              ) -> tuple[dict[str, dict[int, int]], list[set[str]]]:
    counts: dict[str, dict[int, int]] = collections.defaultdict(dict)
    present: list[set[str]] = []
    for position, passage in enumerate(passages):
        if position % _SCAN_SLICE == 0:
            checkpoint()
        here: set[str] = set()
        for mention in index.scan(passage.text):
            slot = counts[mention.concept_id]
            slot[position] = slot.get(position, 0) + 1
            here.add(mention.concept_id)
        present.append(here)
    return counts, present


def _support(counts: dict[int, int], defining: dict[str, float], passages: Sequence[KnowledgePassage],
             by_id: Mapping[str, KnowledgePassage], place: Mapping[str, tuple], preference: Mapping[str, int]
             ) -> tuple[Support, ...]:
    rows = {}
    for i, n in counts.items():
        passage_id = passages[i].passage_id
        rows[passage_id] = Support(passage=passages[i], mentions=n, strength=defining.get(passage_id, 0.0),
                                   defines=passage_id in defining)
    for passage_id in defining.keys() - rows.keys():
        rows[passage_id] = Support(passage=by_id[passage_id], mentions=0, defines=True, strength=defining[passage_id])
    folded = fold_copies(list(rows.values()), place, preference)
    return tuple(sorted(folded, key=lambda s: (-s.strength, -s.mentions, s.passage.document_id, s.passage.start)))


def _representatives(passages: Sequence[KnowledgePassage], place: Mapping[str, tuple],
                     preference: Mapping[str, int]) -> dict[str, str]:
    """Each passage that is a copy → the passage of the preferred copy at its place (fold_copies' choice)."""
    chosen: dict[tuple, KnowledgePassage] = {}
    for passage in passages:
        spot = place[passage.passage_id]
        held = chosen.get(spot)
        if held is None or (preference.get(passage.document_id, 0), passage.document_id) < \
                (preference.get(held.document_id, 0), held.document_id):
            chosen[spot] = passage
    return {p.passage_id: chosen[place[p.passage_id]].passage_id for p in passages
            if chosen[place[p.passage_id]].passage_id != p.passage_id}


def _concept(draft: Draft, documents: Mapping[str, KnowledgeDocument], by_id: Mapping[str, KnowledgePassage],
             support: tuple[Support, ...], index_version: str) -> Concept:
    summary, citation = _summary(draft, by_id, support, index_version)
    if draft.glossary is not None and draft.glossary.summary:
        summary = draft.glossary.summary
    defining = collections.Counter(e.document_id for e in draft.evidence if e.kind in relations.DEFINING_KINDS)
    if not defining:
        defining = collections.Counter(e.document_id for e in draft.evidence)
    defined_in = tuple(sorted(defining, key=lambda d: (-defining[d], d)))
    return Concept(id=draft.id, title=draft.title, aliases=draft.aliases, summary=summary, citation=citation,
                   type=draft.type, confidence=draft.confidence, defined_in=defined_in,
                   sources=tuple(dict.fromkeys(e.kind.value for e in draft.evidence)) or ("glossary",))


def _summary(draft: Draft, by_id: Mapping[str, KnowledgePassage], support: tuple[Support, ...], index_version: str
             ) -> tuple[str, Citation | None]:
    """One extractive sentence: the definition's own sentence, else the first sentence of the section
    a heading opens, else the first sentence that names the concept."""
    for item in draft.evidence:
        passage = by_id.get(item.passage_id)
        if passage is None:
            continue
        if item.kind in (EvidenceKind.DEFINITION, EvidenceKind.ACRONYM, EvidenceKind.ENTRY):
            found = _sentence_at(passage, item.start) if item.kind is not EvidenceKind.ENTRY else None
            found = found or _first_sentence(passage)
        elif item.kind is EvidenceKind.HEADING:
            found = _first_sentence(passage)
        else:
            continue
        if found is not None:
            return _cited(passage, found, index_version)
    names = {w.lower() for name in (draft.title, *draft.aliases) for w in words(name)}
    for row in support:
        found = _first_sentence(row.passage, names)
        if found is not None:
            return _cited(row.passage, found, index_version)
    return draft.title, None


def _usable(text: str) -> bool:
    return len(words(text)) >= 4 and not text.lstrip().startswith(("#", "```", "|", "~~~")) and "---" not in text


def _sentence_at(passage: KnowledgePassage, offset: int) -> tuple[int, int] | None:
    relative = offset - passage.start
    for start, end in sentences(passage.text):
        if start <= relative < end:
            return (start, end) if _usable(passage.text[start:end]) else None
    return None


def _first_sentence(passage: KnowledgePassage, names: set[str] | None = None) -> tuple[int, int] | None:
    heading_line = passage.text.lstrip().startswith("#")
    first_line_end = passage.text.find("\n") if heading_line else -1
    for start, end in sentences(passage.text):
        if start <= first_line_end or not _usable(passage.text[start:end]):
            continue
        if names is None or names & {t.text.lower() for t in tokens(passage.text[start:end])}:
            return start, end
    return None


def _cited(passage: KnowledgePassage, span: tuple[int, int], index_version: str) -> tuple[str, Citation]:
    start, end = span
    if end - start > MAX_SUMMARY_CHARS:
        cut = passage.text.rfind(" ", start, start + MAX_SUMMARY_CHARS)
        end = cut if cut > start else start + MAX_SUMMARY_CHARS
    return passage.text[start:end], Citation(document_id=passage.document_id, passage_id=passage.passage_id,
                                             start=passage.start + start, end=passage.start + end,
                                             index_version=index_version)
