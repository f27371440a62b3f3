"""The concept tools, the `concept://{id}` resource template and the `explain-concept` prompt.

All five tools are read-only and answer `{"items": [...]}`. An unknown concept id is invalid_params
naming the id and its nearest ids; a term nobody knows is not an error (resolveConcept answers the
nearest candidates with low scores); an index that cannot be reached is a tool error to retry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hexmcp.core import ErrorCode, McpServer, ProtocolError, ToolContext, ToolError, models

from . import items
from .errors import UnknownConceptError
from .model import DERIVED_RELATIONS, Metric
from .service import ConceptService

if TYPE_CHECKING:  # the query side imports numpy and networkx: loaded with the first call, not at start-up
    from .base import ConceptBase

MAX_TEXT_CHARS = 100_000
RESOLVED_SCORE = 0.3  # resolver.RESOLVED_SCORE, restated for the description (a test holds them equal)

MAX_TERM_CHARS = 200
MAX_DEPTH = 3
DEFAULT_GRAPH_LIMIT = 50
MAX_GRAPH_LIMIT = 500
NEIGHBOURHOOD_DEPTH = 2  # analyzeGraph with a conceptId scores the concepts within this many hops
_ID = {"type": "string", "minLength": 1, "maxLength": 200, "description": "A concept id (from resolveConcept)."}
_READ_ONLY = models.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def register_concept_tools(server: McpServer, knowledge: Any, glossary_path: str | None = None) -> ConceptService:
    service = ConceptService(knowledge, glossary_path)

    async def current() -> ConceptBase:
        try:
            return await service.base()
        except Exception as error:  # the knowledge index (a vector store) is unavailable: retry later
            from hexmcp.tools.knowledge.vectors import VectorStoreError

            if isinstance(error, VectorStoreError):
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

    concept_items = items.items_output(items.CONCEPT_SCHEMA)
    server.tools.add(
        "resolveConcept", resolve_concept, title="Resolve a term to a concept", annotations=_READ_ONLY,
        description="Find the concept a term names: exact id, alias, fuzzy spelling, then meaning, in that order. "
                    "items[0] is the best match, then up to 5 alternatives; each has score (0..1: id 1, alias "
                    "0.95-0.98, fuzzy 0.9 x spelling similarity, semantic = cosine, at most 0.9) and matched (how). "
                    f"resolved is false when the best score is under {RESOLVED_SCORE}: the items are then only the "
                    "nearest candidates.",
        input_schema={"type": "object", "required": ["term"], "properties": {
            "term": {"type": "string", "minLength": 1, "maxLength": MAX_TERM_CHARS,
                     "description": "A name, alias, misspelling or description of a concept."}}},
        output_schema=items.items_output(items.CONCEPT_SCHEMA, extra={"resolved": {"type": "boolean"}}),
        schemas_checked_in_tests=True)
    server.tools.add(
        "explainConcept", explain_concept, title="Explain a concept with cited passages", annotations=_READ_ONLY,
        description="The concept (summary quoted from the corpus, with its citation), its best supporting passages "
                    "(score 0..1: 0.5 if the passage defines it + 0.3 x cosine + 0.2 x mentions/3, each with document, "
                    "offsets and index version) and its nearest related concepts (relation and weight).",
        input_schema={"type": "object", "required": ["conceptId"], "properties": {
            "conceptId": _ID, "passages": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3}}},
        output_schema=items.items_output(items.CONCEPT_SCHEMA, items.PASSAGE_SCHEMA), schemas_checked_in_tests=True)
    server.tools.add(
        "queryGraph", query_graph, title="The concept graph around a concept", annotations=_READ_ONLY,
        description="A graph item: nodes (concepts and the documents that define them, with their hop distance) "
                    "and typed, weighted edges (weight 0..1) within `depth` hops, strongest edges first, at most "
                    f"`limit` nodes (truncated + note when cut). Derived relations: {', '.join(DERIVED_RELATIONS)}; "
                    "a glossary adds its own.",
        input_schema={"type": "object", "required": ["conceptId"], "properties": {
            "conceptId": _ID, "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "default": 1},
            "relations": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 32,
                          "description": "Only follow these relation kinds (default: all)."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_GRAPH_LIMIT, "default": DEFAULT_GRAPH_LIMIT}}},
        output_schema=items.items_output(items.GRAPH_SCHEMA), schemas_checked_in_tests=True)
    server.tools.add(
        "analyzeGraph", analyze_graph, title="Most influential concepts", annotations=_READ_ONLY,
        description="Score items for concepts over the whole graph, or the concepts within 2 hops of conceptId: "
                    "pagerank, betweenness or degree (score = value / the largest value, 0..1), or communities "
                    "(Louvain; score = the share of the concept's edge weight inside its community).",
        input_schema={"type": "object", "required": ["metric"], "properties": {
            "metric": {"enum": [m.value for m in Metric]}, "conceptId": _ID,
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_GRAPH_LIMIT, "default": 10}}},
        output_schema=items.items_output(items.SCORE_SCHEMA), schemas_checked_in_tests=True)
    server.tools.add(
        "linkEntities", link_entities, title="Link a text's mentions to concepts", annotations=_READ_ONLY,
        description="The concepts a text mentions, each with its character spans (start, end: Python string "
                    "offsets into the text) and confidence 0..1 = concept confidence x match quality x specificity "
                    "(names found everywhere in the corpus count less). minConfidence drops weaker spans.",
        input_schema={"type": "object", "required": ["text"], "properties": {
            "text": {"type": "string", "maxLength": MAX_TEXT_CHARS},
            "minConfidence": {"type": "number", "minimum": 0, "maximum": 1, "default": 0}}},
        output_schema=concept_items, schemas_checked_in_tests=True)
    _register_resources_and_prompt(server, service, concept_of)
    return service


def _register_resources_and_prompt(server: McpServer, service: ConceptService, concept_of: Any) -> None:
    async def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:
        base = service.loaded
        if base is None:
            return []
        prefix = value.strip().lower()
        ranked = sorted(base.concepts.values(), key=lambda c: (-c.confidence, c.id))
        return [c.id for c in ranked if c.id.startswith(prefix) or c.title.lower().startswith(prefix)]

    async def read(id: str) -> str:  # noqa: A002 - the template variable's name
        base = await service.base()
        if id not in base.concepts:
            raise ProtocolError(ErrorCode.RESOURCE_NOT_FOUND, f"unknown concept id {id!r}", {"uri": items.concept_uri(id)})
        return _markdown(base, id)

    server.resources.add_template(models.ResourceTemplate(
        uri_template=items.CONCEPT_URI, name="concept", title="A concept of the knowledge base",
        description="A concept's title, aliases, cited summary, supporting passages and related concepts (Markdown).",
        mime_type="text/markdown"), read, complete)

    async def render(conceptId: str) -> list[models.PromptMessage]:  # noqa: N803 - the argument's wire name
        base = await service.base()
        concept_of(base, conceptId, "$.arguments.conceptId")
        text = ("Explain the concept below to a reader new to this project, using only the cited passages. "
                "Cite each statement with its passage number like [1]; say so if the passages do not cover "
                "something.\n\n" + _markdown(base, conceptId))
        return [models.PromptMessage(role="user", content=models.TextContent(text=text))]

    server.prompts.add(models.Prompt(
        name="explain-concept", title="Explain a concept from its sources",
        description="A grounded explanation request: the concept's summary and its best passages, numbered for citation.",
        arguments=[models.PromptArgument(name="conceptId", required=True,
                                         description="A concept id (see resolveConcept; completion offers ids).")]),
        render, complete)


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
