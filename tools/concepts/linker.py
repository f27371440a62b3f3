"""linkEntities: the concepts a text mentions, with character spans and a confidence.

Mentions are found by alias key (mentions.AliasIndex: longest match, no overlaps). Confidence (0..1)
= the concept's confidence × how the words matched (1 when they equal an alias, 0.9 when only their
stems do, 0.5 for an acronym written in lower case: "rest" is rarely REST) × specificity, where
specificity = 0.5 + 0.5 · log(N / df) / log(N) for a concept named in df of the N passages: a name
that appears everywhere ("model") says less about what a text is about than one found in one place.
"""

from __future__ import annotations

import math

import attrs

from .base import ConceptBase
from .text import words


@attrs.frozen(kw_only=True)
class Link:
    concept_id: str
    start: int
    end: int
    text: str
    confidence: float


def specificity(base: ConceptBase, concept_id: str) -> float:
    total = max(base.passages_total, 2)
    found_in = min(max(base.frequency.get(concept_id, 0), 1), total)
    return 0.5 + 0.5 * math.log(total / found_in) / math.log(total)


def link(base: ConceptBase, text: str, min_confidence: float = 0.0) -> list[Link]:
    links = []
    for mention in base.aliases.scan(text):
        concept = base.concepts[mention.concept_id]
        surface = text[mention.start:mention.end]
        quality = 1.0 if mention.exact else 0.9
        if not surface.isupper() and any(a.isupper() and a.lower() == surface.lower() for a in
                                         (concept.title, *concept.aliases) if len(words(a)) == 1):
            quality = 0.5
        confidence = round(concept.confidence * quality * specificity(base, concept.id), 4)
        if confidence >= min_confidence:
            links.append(Link(concept_id=concept.id, start=mention.start, end=mention.end, text=surface,
                              confidence=confidence))
    return links
