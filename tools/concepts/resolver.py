"""resolveConcept: a term → the concept it names, trying, in order, the exact id, an alias (by key,
text.key_of), a fuzzy spelling (rapidfuzz, normalised Indel similarity), an acronym of its name or the
name of its acronym ("server-side rendering" ↔ "SSR", where the corpus never wrote them side by side)
and the meaning (MiniLM cosine to concept titles, and to the passages that define concepts). The first stage that finds
anything gives the best match and its other finds; the best match's nearest concepts (title
embeddings) fill up the alternatives, scored cosine × the best's score. An unknown term still gets
its nearest candidates, marked by a low score.

Scores (0..1) by how the term matched: id 1.0; alias 0.98 (same words) or 0.95 (same stems); acronym 0.9;
fuzzy 0.9 × similarity (>= spelling.FUZZY_CUTOFF); semantic: 0.5 × the title's cosine + 0.5 × the best
cosine of a passage that defines the concept (at most 0.9), so a score under RESOLVED_SCORE means
"nearest guess, not a match".
"""

from __future__ import annotations

import enum

import attrs
import numpy as np

from .base import ConceptBase
from .spelling import spelled_like
from .text import ACRONYM, initials_of, key_of, tokens
from .vocabulary import RESOLVED_SCORE, SEMANTIC_TITLE_SHARE

MAX_ALTERNATIVES = 5
ACRONYM_SCORE = 0.9
SEMANTIC_CAP = 0.9
TITLE_SHARE = SEMANTIC_TITLE_SHARE
_DEPTH = 20


class HowMatched(str, enum.Enum):
    ID = "id"
    ALIAS = "alias"
    FUZZY = "fuzzy"
    SEMANTIC = "semantic"


@attrs.frozen(kw_only=True)
class Match:
    concept_id: str
    score: float
    matched: HowMatched
    via: str  # the alias, spelling or passage id it matched through


@attrs.frozen(kw_only=True)
class Resolution:
    best: Match | None
    alternatives: tuple[Match, ...]

    @property
    def resolved(self) -> bool:
        return self.best is not None and self.best.score >= RESOLVED_SCORE


def resolve(base: ConceptBase, term: str) -> Resolution:
    """The first stage that finds anything gives the best match and its other finds; the alternatives
    are filled up with the best match's nearest concepts by title embedding. Only a term that no id,
    alias or spelling matches pays for embedding the query (the semantic stage)."""
    for stage in (_by_id, _by_alias, _by_spelling, _by_acronym):
        found = stage(base, term)
        if found:
            return _with_neighbours(base, found)
    found = _by_meaning(base, term)
    return Resolution(best=found[0], alternatives=tuple(found[1:MAX_ALTERNATIVES + 1])) if found else \
        Resolution(best=None, alternatives=())


def _with_neighbours(base: ConceptBase, found: list[Match]) -> Resolution:
    best = found[0]
    others = {m.concept_id: m for m in found[1:] if m.concept_id != best.concept_id}
    if len(others) < MAX_ALTERNATIVES and len(base) > 1:
        cosines = base.vectors @ base.vector(best.concept_id)
        for row in np.argsort(-cosines)[:MAX_ALTERNATIVES + len(others) + 1]:
            concept_id = base.order[int(row)]
            if concept_id != best.concept_id and concept_id not in others:
                others[concept_id] = Match(concept_id=concept_id, matched=HowMatched.SEMANTIC, via=best.concept_id,
                                           score=round(min(max(float(cosines[row]) * best.score, 0.0), SEMANTIC_CAP), 4))
    ranked = sorted(others.values(), key=lambda m: (-m.score, m.concept_id))
    return Resolution(best=best, alternatives=tuple(ranked[:MAX_ALTERNATIVES]))


def _by_id(base: ConceptBase, term: str) -> list[Match]:
    candidate = term.strip()
    if candidate in base.concepts:
        return [Match(concept_id=candidate, score=1.0, matched=HowMatched.ID, via=candidate)]
    return []


def _by_alias(base: ConceptBase, term: str) -> list[Match]:
    concept_id = base.aliases.concept_of(key_of(term))
    if concept_id is None:
        return []
    concept = base.concepts[concept_id]
    surface = " ".join(t.text.lower() for t in tokens(term))
    same_words = any(" ".join(t.text.lower() for t in tokens(name)) == surface for name in (concept.title, *concept.aliases))
    return [Match(concept_id=concept_id, score=0.98 if same_words else 0.95, matched=HowMatched.ALIAS, via=term.strip())]


def _by_acronym(base: ConceptBase, term: str) -> list[Match]:
    """"server-side rendering" → the concept "SSR"; "PVC" → the concept "persistent volume claim": the surest
    (most confident, then most mentioned) first."""
    term = term.strip()
    if ACRONYM.match(term):
        found = base.initials.get(term.rstrip("s").upper(), [])
    else:
        found = base.acronyms.get(initials_of(term), []) if len(initials_of(term)) >= 3 else []
    ranked = sorted(dict.fromkeys(found), key=lambda c: (-base.concepts[c].confidence, -base.frequency.get(c, 0), c))
    return [Match(concept_id=c, score=ACRONYM_SCORE, matched=HowMatched.ALIAS, via=term) for c in ranked]


def _by_spelling(base: ConceptBase, term: str, limit: int = MAX_ALTERNATIVES + 1) -> list[Match]:
    return [Match(concept_id=owner, score=round(0.9 * similarity / 100, 4), matched=HowMatched.FUZZY, via=choice)
            for owner, similarity, choice in spelled_like(base.fuzzy_choices, base.fuzzy_owner, term, limit)]


def _by_meaning(base: ConceptBase, term: str) -> list[Match]:
    """Half the cosine to the concept's title, half the best cosine among the passages that define it
    (within the dense top _DEPTH): a description finds the section that explains a thing even when
    it shares no words with the thing's name, and the title ranks the concepts that section defines."""
    if base.embed_query is None or not len(base):
        return []
    query = base.embed_query(term)
    cosines = base.vectors @ query
    routed: dict[str, tuple[float, str]] = {}
    if base.nearest_passages is not None:
        for passage, cosine in base.nearest_passages(query, _DEPTH):
            for concept_id in base.defined_by(passage.passage_id):
                if cosine > routed.get(concept_id, (-1.0, ""))[0]:
                    routed[concept_id] = (cosine, passage.passage_id)
    candidates = set(routed) | {base.order[int(row)] for row in np.argsort(-cosines)[:_DEPTH]}
    scores = {}
    for concept_id in candidates:
        title = float(cosines[base.row_of[concept_id]])
        via = routed.get(concept_id, (0.0, base.concepts[concept_id].title))
        scores[concept_id] = (TITLE_SHARE * title + (1 - TITLE_SHARE) * max(via[0], 0.0), via[1])
    ranked = sorted(scores.items(), key=lambda item: (-item[1][0], item[0]))[:MAX_ALTERNATIVES + 1]
    return [Match(concept_id=c, score=round(min(max(s, 0.0), SEMANTIC_CAP), 4), matched=HowMatched.SEMANTIC, via=via)
            for c, (s, via) in ranked]
