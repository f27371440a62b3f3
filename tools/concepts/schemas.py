"""The concept tools' results as types: `{"items": [...]}` of kinds `concept`, `passage`, `graph` and
`score` (items.py builds them), whose JSON Schemas are the tools' output schemas; and the concept URI
template.

Plain types, apart from items.py, so the tools' definitions can be registered before the `initialize`
answer without importing what builds the items. No `from __future__ import annotations`
here: a TypedDict only sees `NotRequired` in annotations evaluated when the class is made.
"""

from typing import Annotated, Literal, NotRequired, TypedDict

CONCEPT_URI = "concept://{id}"

Unit = Annotated[float, {"minimum": 0, "maximum": 1}]
Count = Annotated[int, {"minimum": 0}]


class Offsets(TypedDict):
    start: Count
    end: Count


class CitationItem(TypedDict):
    documentId: str
    path: str
    passageId: str
    offsets: Offsets
    indexVersion: str


class Span(TypedDict):
    start: int
    end: int
    text: str
    confidence: Unit


class ConceptItem(TypedDict):
    kind: Literal["concept"]
    id: str
    title: str
    uri: NotRequired[str]
    aliases: list[str]
    summary: str
    citation: CitationItem | None
    type: str
    confidence: Unit
    definedIn: NotRequired[list[str]]
    score: NotRequired[Unit]  # resolveConcept's match
    matched: NotRequired[Literal["id", "alias", "fuzzy", "semantic"]]
    via: NotRequired[str]
    relation: NotRequired[str]  # explainConcept's related concepts
    weight: NotRequired[Unit]
    spans: NotRequired[list[Span]]  # linkEntities' mentions


class PassageItem(TypedDict):
    kind: Literal["passage"]
    documentId: str
    passageId: str
    title: str
    text: str
    score: Unit
    offsets: Offsets
    headingPath: NotRequired[list[str]]
    citation: CitationItem
    defines: NotRequired[bool]
    mentions: NotRequired[Count]


class GraphNode(TypedDict):
    id: str
    title: str
    kind: Literal["concept", "document"]
    depth: Count


class GraphEdge(TypedDict):
    source: str
    target: str
    relation: str
    weight: Unit


class GraphItem(TypedDict):
    kind: Literal["graph"]
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    truncated: bool
    note: str | None


class ScoreItem(TypedDict):
    kind: Literal["score"]
    conceptId: str
    title: str
    metric: str
    score: Unit
    rank: Annotated[int, {"minimum": 1}]
    community: NotRequired[Count]


class ResolvedConcepts(TypedDict):
    """resolveConcept's answer."""

    items: list[ConceptItem]
    resolved: bool


class ExplainedConcept(TypedDict):
    """explainConcept's answer: the concept, its passages, its related concepts."""

    items: list[ConceptItem | PassageItem]


class GraphItems(TypedDict):
    items: list[GraphItem]


class ScoreItems(TypedDict):
    items: list[ScoreItem]


class ConceptItems(TypedDict):
    items: list[ConceptItem]
