"""The words and thresholds the concept tools' wire uses: analyzeGraph's metrics, the derived relation kinds,
and the score under which resolveConcept says `resolved: false`.

Apart from model.py and resolver.py so that the tools' definitions, registered before the
`initialize` answer, name them without defining the concept layer's value classes.
"""

from __future__ import annotations

import enum


class Metric(str, enum.Enum):
    """analyzeGraph's metrics (graph.py computes them)."""

    PAGERANK = "pagerank"
    BETWEENNESS = "betweenness"
    DEGREE = "degree"
    COMMUNITIES = "communities"


DEFINED_IN, BROADER, NARROWER, LINKS_TO = "defined-in", "broader", "narrower", "links-to"
CO_OCCURS, SIMILAR = "co-occurs-with", "similar-to"
DERIVED_RELATIONS = (DEFINED_IN, BROADER, NARROWER, LINKS_TO, CO_OCCURS, SIMILAR)

RESOLVED_SCORE = 0.3  # resolver.py's threshold, and the number resolveConcept's description states
#: resolveConcept's semantic score: this × the title's cosine + the rest × the best defining passage's cosine
SEMANTIC_TITLE_SHARE = 0.5
#: explainConcept's passage score: these weights × how strongly it defines the concept, its cosine to the
#: concept, min(1, mentions / 3) (explain.py computes it; the tool's description states it)
DEFINES_WEIGHT, COSINE_WEIGHT, MENTIONS_WEIGHT = 0.7, 0.2, 0.1
