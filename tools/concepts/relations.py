"""Typed, weighted edges between concepts (and the documents that define them). Every weight is 0..1:

- glossary relations: the weight the glossary gives (default 1).
- defined-in (concept → document): the document's share of the concept's defining sightings, relative
  to its best document (1 for the main one).
- broader / narrower: a concept whose heading sits under another's heading (narrower → broader is
  `broader`, the reverse `narrower`); weight 1.
- links-to: document → document, min(1, links / 3); and a link text's concept → the linked document, 1.
- co-occurs-with: Jaccard overlap of the two concepts' passage sets, kept when they share at least
  MIN_SHARED passages, at most CO_OCCUR_PER_CONCEPT strongest per concept.
- similar-to: cosine of the title embeddings when >= SIMILAR_COSINE, at most SIMILAR_PER_CONCEPT each.
"""

from __future__ import annotations

import collections
import itertools
from typing import Iterable, Mapping, Sequence

import numpy as np

from .dedup import Draft
from .model import Edge, EvidenceKind
from .text import key_of
from .vocabulary import BROADER, CO_OCCURS, DEFINED_IN, LINKS_TO, NARROWER, SIMILAR

DOCUMENT_PREFIX = "doc:"
MIN_SHARED = 2
CO_OCCUR_PER_CONCEPT = 10
MAX_CONCEPTS_PER_PASSAGE = 24  # pairs grow with the square: a passage naming more keeps its rarest
SIMILAR_COSINE = 0.75
SIMILAR_PER_CONCEPT = 5
DEFINING_KINDS = frozenset({EvidenceKind.HEADING, EvidenceKind.DEFINITION, EvidenceKind.ACRONYM,
                            EvidenceKind.GLOSSARY, EvidenceKind.ENTRY})


def document_node(document_id: str) -> str:
    return DOCUMENT_PREFIX + document_id


def glossary_edges(drafts: Sequence[Draft], kept: set[str]) -> Iterable[Edge]:
    for draft in drafts:
        if draft.glossary is None or draft.id not in kept:
            continue
        for relation in draft.glossary.relations:
            if relation.target in kept:
                yield Edge(source=draft.id, target=relation.target, relation=relation.relation, weight=relation.weight)


def defined_in_edges(drafts: Sequence[Draft]) -> Iterable[Edge]:
    for draft in drafts:
        counts = collections.Counter(e.document_id for e in draft.evidence if e.kind in DEFINING_KINDS)
        if not counts:
            counts = collections.Counter(e.document_id for e in draft.evidence)
        best = max(counts.values(), default=1)
        for document_id, count in sorted(counts.items()):
            yield Edge(source=draft.id, target=document_node(document_id), relation=DEFINED_IN,
                       weight=round(count / best, 4))


def heading_edges(drafts: Sequence[Draft]) -> Iterable[Edge]:
    concept_of = {key_of(e.term): d.id for d in drafts for e in d.evidence if e.kind is EvidenceKind.HEADING}
    pairs: set[tuple[str, str]] = set()
    for draft in drafts:
        for item in draft.evidence:
            if item.kind is not EvidenceKind.HEADING:
                continue
            parents = [concept_of.get(key_of(h)) for h in item.headings[:-1]]
            parent = next((p for p in reversed(parents) if p is not None and p != draft.id), None)
            if parent is not None:
                pairs.add((draft.id, parent))
    for child, parent in sorted(pairs):
        yield Edge(source=child, target=parent, relation=BROADER, weight=1.0)
        yield Edge(source=parent, target=child, relation=NARROWER, weight=1.0)


def link_edges(drafts: Sequence[Draft]) -> Iterable[Edge]:
    between: collections.Counter[tuple[str, str]] = collections.Counter()
    concept_targets: set[tuple[str, str]] = set()
    for draft in drafts:
        for item in draft.evidence:
            if item.kind is EvidenceKind.LINK and item.target and item.target != item.document_id:
                between[(item.document_id, item.target)] += 1
                concept_targets.add((draft.id, item.target))
    for (source, target), count in sorted(between.items()):
        yield Edge(source=document_node(source), target=document_node(target), relation=LINKS_TO,
                   weight=round(min(1.0, count / 3), 4))
    for concept_id, target in sorted(concept_targets):
        yield Edge(source=concept_id, target=document_node(target), relation=LINKS_TO, weight=1.0)


def co_occurrence_edges(passage_concepts: Sequence[set[str]], frequency: Mapping[str, int]) -> Iterable[Edge]:
    shared: collections.Counter[tuple[str, str]] = collections.Counter()
    for present in passage_concepts:
        ranked = sorted(present, key=lambda c: (frequency[c], c))[:MAX_CONCEPTS_PER_PASSAGE]
        shared.update(itertools.combinations(sorted(ranked), 2))
    best: dict[str, list[tuple[float, str, str]]] = collections.defaultdict(list)
    for (a, b), count in shared.items():
        if count >= MIN_SHARED:
            weight = count / (frequency[a] + frequency[b] - count)
            best[a].append((weight, a, b))
            best[b].append((weight, a, b))
    chosen: set[tuple[float, str, str]] = set()
    for candidates in best.values():
        chosen.update(sorted(candidates, key=lambda c: (-c[0], c[1], c[2]))[:CO_OCCUR_PER_CONCEPT])
    for weight, a, b in sorted(chosen, key=lambda c: (c[1], c[2])):
        yield Edge(source=a, target=b, relation=CO_OCCURS, weight=round(weight, 4))


def similarity_edges(ids: Sequence[str], vectors: np.ndarray) -> Iterable[Edge]:
    pairs: dict[tuple[str, str], float] = {}
    for block in range(0, len(ids), 1024):
        similarity = vectors[block:block + 1024] @ vectors.T
        for row in range(similarity.shape[0]):
            i = block + row
            similarity[row, i] = -1.0
            top = np.argpartition(-similarity[row], min(SIMILAR_PER_CONCEPT, len(ids) - 1))[:SIMILAR_PER_CONCEPT]
            for j in top:
                score = float(similarity[row, j])
                if score >= SIMILAR_COSINE:
                    pairs[(min(ids[i], ids[j]), max(ids[i], ids[j]))] = score
    for (a, b), score in sorted(pairs.items()):
        yield Edge(source=a, target=b, relation=SIMILAR, weight=round(min(score, 1.0), 4))
