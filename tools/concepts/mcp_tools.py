"""The concept tools' handlers: the five tools, the `concept://{id}` resource's reader and the
`explain-concept` prompt's renderer (their definitions, what clients see, are in definitions.py).

All five tools are read-only and answer `{"items": [...]}`. Work that grows with what a client sends or
with the graph (linking up to 100,000 characters, embedding a term, explaining, whole-graph metrics) runs
in a worker thread, so a ping or a list on the same server is answered meanwhile. An unknown concept id is invalid_params
naming the id and its nearest ids; a term nobody knows is not an error (resolveConcept answers the
nearest candidates with low scores); an index that cannot be reached is a tool error to retry.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from hexmcp.core import ErrorCode, McpServer, ProtocolError, ToolError, models
from hexmcp.core.registrar import Registrar

from . import items
from .definitions import MAX_GRAPH_LIMIT, NEIGHBOURHOOD_DEPTH, register_definitions
from .errors import UnknownConceptError
from .service import ConceptService
from .vocabulary import DERIVED_RELATIONS, Metric

if TYPE_CHECKING:  # the query side imports numpy and networkx: loaded with the first call, not at start-up
    from hexmcp.tools.ports import KnowledgeBase

    from .base import ConceptBase
    from .model import Concept
    from .schemas import ConceptItems, ExplainedConcept, GraphItems, ResolvedConcepts, ScoreItems


def register_concept_tools(server: McpServer, knowledge: KnowledgeBase, glossary_path: str | None = None
                           ) -> ConceptService:
    """The concept tools on `server` with their handlers made now (first_use.py makes them on first use)."""
    service = ConceptService(knowledge, glossary_path)
    handlers = ConceptHandlers(service)
    register_definitions(Registrar(server), service, lambda: handlers)
    return service


class ConceptHandlers:
    """The tools', the template's and the prompt's work over the concept base `service` keeps, with the
    arguments as the definitions (definitions.py) received them, already checked against their schemas."""

    def __init__(self, service: ConceptService) -> None:
        self.service = service

    async def resolve_concept(self, term: str) -> ResolvedConcepts:
        term = term.strip()
        if not term:
            raise ProtocolError(ErrorCode.INVALID_PARAMS, "Invalid arguments for tool 'resolveConcept': argument term must not be empty or "
                                "whitespace only",
                                {"path": "$.arguments.term"})
        from .resolver import resolve

        base = await self._current()
        found = await asyncio.to_thread(resolve, base, term)  # a term no name matches is embedded
        matches = [found.best, *found.alternatives] if found.best else []
        return {"items": [items.match_item(base.concepts[m.concept_id], m) for m in matches],
                "resolved": found.resolved}

    async def explain_concept(self, concept_id: str, passages: int) -> ExplainedConcept:
        from .explain import explain

        base = await self._current()
        _concept_of(base, concept_id)
        found = await asyncio.to_thread(explain, base, concept_id, int(passages))
        return {"items": [items.concept_item(found.concept),
                          *(items.passage_item(p, base.index_version) for p in found.passages),
                          *(items.related_item(r) for r in found.related)]}

    async def query_graph(self, concept_id: str, depth: int, relations: list[str] | None, limit: int) -> GraphItems:
        base = await self._current()
        _concept_of(base, concept_id)
        if relations:
            _check_relations(base, relations)
        found = base.graph.neighbourhood(concept_id, int(depth), frozenset(relations) if relations else None,
                                         int(limit))
        return {"items": [items.graph_item(base.graph, found, int(limit))]}

    async def analyze_graph(self, metric: str, concept_id: str | None, limit: int) -> ScoreItems:
        base = await self._current()
        measure = Metric(metric)
        nodes = None
        if concept_id:
            _concept_of(base, concept_id)
            nodes = base.graph.neighbourhood(concept_id, NEIGHBOURHOOD_DEPTH, None, MAX_GRAPH_LIMIT).nodes
        scores = await asyncio.to_thread(base.graph.scores, measure, nodes)  # whole-graph metrics take a moment once
        return {"items": [items.score_item(s, base.concepts[s.node].title, measure.value, rank)
                          for rank, s in enumerate(scores[:int(limit)], 1)]}

    async def link_entities(self, text: str, min_confidence: float) -> ConceptItems:
        from .linker import link

        base = await self._current()

        def linked() -> list[dict[str, Any]]:  # 100,000 characters: a few hundred ms of scanning, off the loop
            return items.link_items(link(base, text, float(min_confidence)), base.concepts)

        return {"items": await asyncio.to_thread(linked)}

    async def read(self, id: str) -> str:  # noqa: A002 - the template variable's name
        base = await self.service.base()
        if id not in base.concepts:
            raise ProtocolError(ErrorCode.RESOURCE_NOT_FOUND, f"unknown concept id {id!r}", {"uri": items.concept_uri(id)})
        return _markdown(base, id)

    async def render(self, concept_id: str) -> list[models.PromptMessage]:
        base = await self.service.base()
        _concept_of(base, concept_id)
        text = ("Explain the concept below to a reader new to this project, using only the cited passages. "
                "Cite each statement with its passage number like [1]; say so if the passages do not cover "
                "something.\n\n" + _markdown(base, concept_id))
        return [models.PromptMessage(role="user", content=models.TextContent(text=text))]

    async def _current(self) -> ConceptBase:
        try:
            return await self.service.base()
        except Exception as error:  # the knowledge index (a vector store) is unavailable: retry later
            from hexmcp.tools.ports import KnowledgeIndexError

            if isinstance(error, KnowledgeIndexError):
                raise ToolError(f"the knowledge index is unavailable: {error.message}; try again later") from None
            raise


def _concept_of(base: ConceptBase, concept_id: str) -> Concept:
    """The concept, or invalid_params naming the id and its nearest ids."""
    try:
        return base.get(concept_id)
    except UnknownConceptError as error:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, str(error),
                            {"path": "$.arguments.conceptId", "id": concept_id, "nearest": error.nearest}) from None


def _check_relations(base: ConceptBase, relations: list[str]) -> None:
    """A relation kind neither derived nor in the graph (a glossary's own) is a typo, not a filter that
    leaves the concept alone: invalid_params naming the kinds there are."""
    known = sorted(set(DERIVED_RELATIONS) | set(base.graph.relations()))
    unknown = [r for r in relations if r not in known]
    if unknown:
        raise ProtocolError(ErrorCode.INVALID_PARAMS,
                            f"Invalid arguments for tool 'queryGraph': argument relations: unknown relation kind "
                            f"{', '.join(map(repr, unknown))}; the kinds are {', '.join(known)}",
                            {"path": "$.arguments.relations", "unknown": unknown, "relations": known})


def _markdown(base: ConceptBase, concept_id: str) -> str:
    from .explain import explain

    found = explain(base, concept_id, passages=3)
    concept = found.concept
    lines = [f"# {concept.title}", "", f"- id: `{concept.id}` · type: {concept.type} · confidence: {concept.confidence}"]
    if concept.aliases:
        lines.append(f"- aliases: {', '.join(concept.aliases)}")
    source = (f" (from {concept.citation.document_id}, characters {concept.citation.start}-{concept.citation.end})"
              if concept.citation else " (from the glossary)")
    lines += ["", f"Summary: {concept.summary}{source}", "", "## Passages"]
    for number, scored in enumerate(found.passages, 1):
        passage = scored.passage
        lines += ["", f"[{number}] {passage.document_id} > {' > '.join(passage.headings)} (characters "
                      f"{passage.start}-{passage.end}, index {base.index_version})", "", passage.text]
    if found.related:
        lines += ["", "## Related", *(f"- {r.concept.title} (`{r.concept.id}`): {r.relation}, weight {r.weight}"
                                      for r in found.related)]
    return "\n".join(lines)
