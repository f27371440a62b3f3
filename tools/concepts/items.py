"""The concept tools' result items: `{"items": [...]}` of kinds `concept`, `passage`, `graph` and
`score` (the design's contract; their JSON Schemas are in schemas.py). A `passage` item has the knowledge tools'
`searchPassages` shape plus its citation; every `score` and `confidence` is 0..1 (docs/concepts.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .model import Citation, Concept
from .schemas import CONCEPT_URI

if TYPE_CHECKING:  # numpy and networkx load with the concept base, not at start-up
    from .explain import Related, ScoredPassage
    from .graph import ConceptGraph, Neighbourhood, NodeScore
    from .linker import Link
    from .resolver import Match


def concept_uri(concept_id: str) -> str:
    return CONCEPT_URI.replace("{id}", concept_id)


def citation_item(citation: Citation | None) -> dict[str, Any] | None:
    return citation.as_item() if citation is not None else None


def concept_item(concept: Concept, **extra: Any) -> dict[str, Any]:
    return {"kind": "concept", "id": concept.id, "title": concept.title, "uri": concept_uri(concept.id),
            "aliases": list(concept.aliases), "summary": concept.summary, "citation": citation_item(concept.citation),
            "type": concept.type, "confidence": concept.confidence, "definedIn": list(concept.defined_in), **extra}


def match_item(concept: Concept, match: Match) -> dict[str, Any]:
    return concept_item(concept, score=match.score, matched=match.matched.value, via=match.via)


def related_item(related: Related) -> dict[str, Any]:
    return concept_item(related.concept, relation=related.relation, weight=related.weight)


def passage_item(scored: ScoredPassage, index_version: str) -> dict[str, Any]:
    passage = scored.passage
    tail = [h for h in passage.headings if h != passage.title]
    title = " — ".join([passage.title, " > ".join(tail)]) if tail else passage.title
    citation = Citation(document_id=passage.document_id, passage_id=passage.passage_id, start=passage.start,
                        end=passage.end, index_version=index_version)
    return {"kind": "passage", "documentId": passage.document_id, "passageId": passage.passage_id, "title": title,
            "text": passage.text, "score": scored.score, "offsets": {"start": passage.start, "end": passage.end},
            "headingPath": list(passage.headings), "citation": citation.as_item(), "defines": scored.defines,
            "mentions": scored.mentions}


def graph_item(graph: ConceptGraph, found: Neighbourhood, limit: int) -> dict[str, Any]:
    note = None
    if found.truncated:
        note = (f"truncated at limit={limit} nodes: the strongest edges were followed first; raise limit, lower "
                "depth or filter relations to see the rest")
    return {"kind": "graph", "nodes": [{"id": n, "title": graph.title(n), "kind": graph.kind(n),
                                        "depth": found.depth_of[n]} for n in found.nodes],
            "edges": [{"source": e.source, "target": e.target, "relation": e.relation, "weight": e.weight}
                      for e in found.edges],
            "truncated": found.truncated, "note": note}


def score_item(score: NodeScore, title: str, metric: str, rank: int) -> dict[str, Any]:
    item: dict[str, Any] = {"kind": "score", "conceptId": score.node, "title": title, "metric": metric,
                            "score": score.score, "rank": rank}
    if score.community is not None:
        item["community"] = score.community
    return item


def link_items(links: list[Link], concepts: dict[str, Concept]) -> list[dict[str, Any]]:
    """One concept item per concept mentioned, in order of first mention; `confidence` is its best span's."""
    grouped: dict[str, list[Link]] = {}
    for found in links:
        grouped.setdefault(found.concept_id, []).append(found)
    return [concept_item(concepts[concept_id], confidence=max(s.confidence for s in spans),
                         spans=[{"start": s.start, "end": s.end, "text": s.text, "confidence": s.confidence}
                                for s in spans])
            for concept_id, spans in grouped.items()]
