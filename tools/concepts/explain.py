"""explainConcept: a concept's best supporting passages and its nearest related concepts.

A passage's score (0..1) = 0.7 × how strongly it defines the concept (defining.py: a glossary entry,
the opening of a page the concept titles, of a section it heads, a definition sentence ...) + 0.2 ×
its cosine to the concept's title (MiniLM; passages past the dense top DENSE_DEPTH get the lowest
cosine returned) + 0.1 × min(1, mentions / 3): where a passage defines the concept outweighs how often
it names it. Copies of one page were folded into one passage
when the concept base was built, so no passage is shown twice in other versions.
"""

from __future__ import annotations

import attrs

from hexmcp.tools.ports import KnowledgePassage

from .base import ConceptBase
from .model import Concept, Edge
from .vocabulary import COSINE_WEIGHT, DEFINES_WEIGHT, MENTIONS_WEIGHT

DENSE_DEPTH = 50
MAX_CANDIDATES = 200
DEFINES, COSINE, MENTIONS = DEFINES_WEIGHT, COSINE_WEIGHT, MENTIONS_WEIGHT


@attrs.frozen(kw_only=True)
class ScoredPassage:
    passage: KnowledgePassage
    score: float
    defines: bool
    mentions: int


@attrs.frozen(kw_only=True)
class Related:
    concept: Concept
    relation: str
    weight: float


@attrs.frozen(kw_only=True)
class Explanation:
    concept: Concept
    passages: tuple[ScoredPassage, ...]
    related: tuple[Related, ...]


def explain(base: ConceptBase, concept_id: str, passages: int = 3, related: int = 5) -> Explanation:
    concept = base.get(concept_id)
    candidates = base.support.get(concept_id, ())[:MAX_CANDIDATES]
    cosine: dict[str, float] = {}
    if base.nearest_passages is not None and candidates:
        for passage, score in base.nearest_passages(base.vector(concept_id), DENSE_DEPTH):
            cosine[passage.passage_id] = score
    floor = min(cosine.values(), default=0.0)
    scored = [ScoredPassage(passage=row.passage, defines=row.defines, mentions=row.mentions, score=round(min(1.0, (
        DEFINES * row.strength + COSINE * max(cosine.get(row.passage.passage_id, floor), 0.0)
        + MENTIONS * min(1.0, row.mentions / 3))), 4)) for row in candidates]
    scored.sort(key=lambda s: (-s.score, s.passage.document_id, s.passage.start))
    return Explanation(concept=concept, passages=tuple(scored[:passages]), related=tuple(nearest(base, concept_id, related)))


def nearest(base: ConceptBase, concept_id: str, limit: int) -> list[Related]:
    best: dict[str, Edge] = {}
    for other, edge in base.graph.neighbours(concept_id):
        if other in base.concepts and (other not in best or best[other].weight < edge.weight):
            best[other] = edge
    ranked = sorted(best.items(), key=lambda item: (-item[1].weight, item[0]))[:limit]
    return [Related(concept=base.concepts[other], relation=edge.relation, weight=edge.weight) for other, edge in ranked]
