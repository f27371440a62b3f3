"""The concept tools' handlers: the five tools, the `concept://{id}` resource's reader and the
`explain-concept` prompt's renderer (their definitions, what clients see, are in definitions.py).

All five tools are read-only and answer `{"items": [...]}`. An unknown concept id is invalid_params
naming the id and its nearest ids; a term nobody knows is not an error (resolveConcept answers the
nearest candidates with low scores); an index that cannot be reached is a tool error to retry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

import attrs

from hexmcp.core import ErrorCode, McpServer, ProtocolError, ToolContext, ToolError, models

from . import items
from .definitions import DEFAULT_GRAPH_LIMIT, MAX_GRAPH_LIMIT, NEIGHBOURHOOD_DEPTH, register_definitions
from .errors import UnknownConceptError
from .service import ConceptService
from .vocabulary import Metric

if TYPE_CHECKING:  # the query side imports numpy and networkx: loaded with the first call, not at start-up
    from hexmcp.tools.ports import KnowledgeBase

    from .base import ConceptBase


@attrs.frozen(kw_only=True)
class ConceptHandlers:
    tools: dict[str, Callable[[dict[str, Any], ToolContext], Awaitable[dict[str, Any]]]]
    read: Callable[[str], Awaitable[str]]  # the concept://{id} template's reader
    render: Callable[[str], Awaitable[list[models.PromptMessage]]]  # the explain-concept prompt


def register_concept_tools(server: McpServer, knowledge: KnowledgeBase, glossary_path: str | None = None
                           ) -> ConceptService:
    """The concept tools on `server` with their handlers made now (first_use.py makes them on first use)."""
    service = ConceptService(knowledge, glossary_path)
    handlers = concept_handlers(service)
    register_definitions(server, service, lambda: handlers)
    return service


def concept_handlers(service: ConceptService) -> ConceptHandlers:
    async def current() -> ConceptBase:
        try:
            return await service.base()
        except Exception as error:  # the knowledge index (a vector store) is unavailable: retry later
            from hexmcp.tools.ports import KnowledgeIndexError

            if isinstance(error, KnowledgeIndexError):
                raise ToolError(f"the knowledge index is unavailable: {error.message}; try again later") from None
            raise

    def concept_of(base: ConceptBase, concept_id: str, path: str = "$.arguments.conceptId") -> Any:
        try:
            return base.get(concept_id)
        except UnknownConceptError as error:
            raise ProtocolError(ErrorCode.INVALID_PARAMS, str(error),
                                {"path": path, "id": concept_id, "nearest": error.nearest}) from None

    async def resolve_concept(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        term = arguments["term"].strip()
        if not term:
            raise ProtocolError(ErrorCode.INVALID_PARAMS, "Invalid arguments for tool 'resolveConcept': term is empty",
                                {"path": "$.arguments.term"})
        from .resolver import resolve

        base = await current()
        found = resolve(base, term)
        matches = [found.best, *found.alternatives] if found.best else []
        return {"items": [items.match_item(base.concepts[m.concept_id], m) for m in matches],
                "resolved": found.resolved}

    async def explain_concept(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        from .explain import explain

        base = await current()
        concept_of(base, arguments["conceptId"])
        found = explain(base, arguments["conceptId"], int(arguments.get("passages", 3)))
        return {"items": [items.concept_item(found.concept),
                          *(items.passage_item(p, base.index_version) for p in found.passages),
                          *(items.related_item(r) for r in found.related)]}

    async def query_graph(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        base = await current()
        concept_of(base, arguments["conceptId"])
        relations = arguments.get("relations")
        limit = int(arguments.get("limit", DEFAULT_GRAPH_LIMIT))
        found = base.graph.neighbourhood(arguments["conceptId"], int(arguments.get("depth", 1)),
                                         frozenset(relations) if relations else None, limit)
        return {"items": [items.graph_item(base.graph, found, limit)]}

    async def analyze_graph(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        import asyncio

        base = await current()
        metric = Metric(arguments["metric"])
        nodes = None
        if arguments.get("conceptId"):
            concept_of(base, arguments["conceptId"])
            nodes = base.graph.neighbourhood(arguments["conceptId"], NEIGHBOURHOOD_DEPTH, None, MAX_GRAPH_LIMIT).nodes
        scores = await asyncio.to_thread(base.graph.scores, metric, nodes)  # whole-graph metrics take a moment once
        limit = int(arguments.get("limit", 10))
        return {"items": [items.score_item(s, base.concepts[s.node].title, metric.value, rank)
                          for rank, s in enumerate(scores[:limit], 1)]}

    async def link_entities(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        from .linker import link

        base = await current()
        links = link(base, arguments["text"], float(arguments.get("minConfidence", 0.0)))
        return {"items": items.link_items(links, base.concepts)}

    async def read(id: str) -> str:  # noqa: A002 - the template variable's name
        base = await service.base()
        if id not in base.concepts:
            raise ProtocolError(ErrorCode.RESOURCE_NOT_FOUND, f"unknown concept id {id!r}", {"uri": items.concept_uri(id)})
        return _markdown(base, id)

    async def render(conceptId: str) -> list[models.PromptMessage]:  # noqa: N803 - the argument's wire name
        base = await service.base()
        concept_of(base, conceptId, "$.arguments.conceptId")
        text = ("Explain the concept below to a reader new to this project, using only the cited passages. "
                "Cite each statement with its passage number like [1]; say so if the passages do not cover "
                "something.\n\n" + _markdown(base, conceptId))
        return [models.PromptMessage(role="user", content=models.TextContent(text=text))]

    return ConceptHandlers(tools={"resolveConcept": resolve_concept, "explainConcept": explain_concept,
                                  "queryGraph": query_graph, "analyzeGraph": analyze_graph,
                                  "linkEntities": link_entities}, read=read, render=render)


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
