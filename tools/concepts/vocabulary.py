"""The words the concept tools' wire uses: analyzeGraph's metrics and the derived relation kinds.

Apart from model.py (which re-exports them) so that the tools' definitions, registered before the
`initialize` answer, name them without defining the concept layer's value classes (ADR 0013).
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
