"""What clients see of the concept tools: the five tools' definitions, the `concept://{id}` resource
template and the `explain-concept` prompt, registered over handlers got from a function when used.

mcp_tools.py registers them over handlers made at once; first_use.py over handlers made on first use,
which is how `hexmcp stdio` registers them before its `initialize` answer (issue 14, ADR 0013). The
definitions are the same objects either way, so tools/list cannot tell the two apart.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Mapping, Protocol

from hexmcp.core import McpServer, ToolContext, models

from .schemas import CONCEPT_SCHEMA, CONCEPT_URI, GRAPH_SCHEMA, PASSAGE_SCHEMA, SCORE_SCHEMA, items_output
from .service import ConceptService
from .vocabulary import DERIVED_RELATIONS, RESOLVED_SCORE, Metric

MAX_TEXT_CHARS = 100_000
MAX_TERM_CHARS = 200
MAX_DEPTH = 3
DEFAULT_GRAPH_LIMIT = 50
MAX_GRAPH_LIMIT = 500
NEIGHBOURHOOD_DEPTH = 2  # analyzeGraph with a conceptId scores the concepts within this many hops
_ID = {"type": "string", "minLength": 1, "maxLength": 200, "description": "A concept id (from resolveConcept)."}
_READ_ONLY = models.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

# Tool name -> everything `server.tools.add` takes besides the handler, in the order tools/list lists them.
TOOLS: dict[str, dict[str, Any]] = {
    "resolveConcept": dict(
        title="Resolve a term to a concept", annotations=_READ_ONLY,
        description="Find the concept a term names: exact id, alias, fuzzy spelling, then meaning, in that order. "
                    "items[0] is the best match, then up to 5 alternatives; each has score (0..1: id 1, alias "
                    "0.95-0.98, fuzzy 0.9 x spelling similarity, semantic = cosine, at most 0.9) and matched (how). "
                    f"resolved is false when the best score is under {RESOLVED_SCORE}: the items are then only the "
                    "nearest candidates.",
        input_schema={"type": "object", "required": ["term"], "properties": {
            "term": {"type": "string", "minLength": 1, "maxLength": MAX_TERM_CHARS,
                     "description": "A name, alias, misspelling or description of a concept."}}},
        output_schema=items_output(CONCEPT_SCHEMA, extra={"resolved": {"type": "boolean"}})),
    "explainConcept": dict(
        title="Explain a concept with cited passages", annotations=_READ_ONLY,
        description="The concept (summary quoted from the corpus, with its citation), its best supporting passages "
                    "(score 0..1: 0.5 if the passage defines it + 0.3 x cosine + 0.2 x mentions/3, each with document, "
                    "offsets and index version) and its nearest related concepts (relation and weight).",
        input_schema={"type": "object", "required": ["conceptId"], "properties": {
            "conceptId": _ID, "passages": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3}}},
        output_schema=items_output(CONCEPT_SCHEMA, PASSAGE_SCHEMA)),
    "queryGraph": dict(
        title="The concept graph around a concept", annotations=_READ_ONLY,
        description="A graph item: nodes (concepts and the documents that define them, with their hop distance) "
                    "and typed, weighted edges (weight 0..1) within `depth` hops, strongest edges first, at most "
                    f"`limit` nodes (truncated + note when cut). Derived relations: {', '.join(DERIVED_RELATIONS)}; "
                    "a glossary adds its own.",
        input_schema={"type": "object", "required": ["conceptId"], "properties": {
            "conceptId": _ID, "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "default": 1},
            "relations": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 32,
                          "description": "Only follow these relation kinds (default: all)."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_GRAPH_LIMIT, "default": DEFAULT_GRAPH_LIMIT}}},
        output_schema=items_output(GRAPH_SCHEMA)),
    "analyzeGraph": dict(
        title="Most influential concepts", annotations=_READ_ONLY,
        description="Score items for concepts over the whole graph, or the concepts within 2 hops of conceptId: "
                    "pagerank, betweenness or degree (score = value / the largest value, 0..1), or communities "
                    "(Louvain; score = the share of the concept's edge weight inside its community).",
        input_schema={"type": "object", "required": ["metric"], "properties": {
            "metric": {"enum": [m.value for m in Metric]}, "conceptId": _ID,
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_GRAPH_LIMIT, "default": 10}}},
        output_schema=items_output(SCORE_SCHEMA)),
    "linkEntities": dict(
        title="Link a text's mentions to concepts", annotations=_READ_ONLY,
        description="The concepts a text mentions, each with its character spans (start, end: Python string "
                    "offsets into the text) and confidence 0..1 = concept confidence x match quality x specificity "
                    "(names found everywhere in the corpus count less). minConfidence drops weaker spans.",
        input_schema={"type": "object", "required": ["text"], "properties": {
            "text": {"type": "string", "maxLength": MAX_TEXT_CHARS},
            "minConfidence": {"type": "number", "minimum": 0, "maximum": 1, "default": 0}}},
        output_schema=items_output(CONCEPT_SCHEMA)),
}
TEMPLATE = models.ResourceTemplate(
    uri_template=CONCEPT_URI, name="concept", title="A concept of the knowledge base",
    description="A concept's title, aliases, cited summary, supporting passages and related concepts (Markdown).",
    mime_type="text/markdown")
PROMPT = models.Prompt(
    name="explain-concept", title="Explain a concept from its sources",
    description="A grounded explanation request: the concept's summary and its best passages, numbered for citation.",
    arguments=[models.PromptArgument(name="conceptId", required=True,
                                     description="A concept id (see resolveConcept; completion offers ids).")])


class Handlers(Protocol):
    """What the definitions call into (mcp_tools.ConceptHandlers is one)."""

    tools: Mapping[str, Callable[[dict[str, Any], ToolContext], Awaitable[Any]]]
    read: Callable[[str], Awaitable[str]]  # the concept://{id} template's reader
    render: Callable[[str], Awaitable[list[models.PromptMessage]]]  # the explain-concept prompt


Implementation = Callable[[], Handlers]


def register_definitions(server: McpServer, service: ConceptService, implementation: Implementation) -> None:
    """Every tool, the template and the prompt on `server`, each calling into `implementation()` (the
    handlers over `service`) when used."""
    for name, definition in TOOLS.items():
        server.tools.add(name, _tool(implementation, name), schemas_checked_in_tests=True, **definition)

    async def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:
        base = service.loaded  # argument completion never waits for (or loads) the concept base
        if base is None:
            return []
        prefix = value.strip().lower()
        ranked = sorted(base.concepts.values(), key=lambda c: (-c.confidence, c.id))
        return [c.id for c in ranked if c.id.startswith(prefix) or c.title.lower().startswith(prefix)]

    async def read(id: str) -> str:  # noqa: A002 - the template variable's name
        return await implementation().read(id)

    async def render(conceptId: str) -> list[models.PromptMessage]:  # noqa: N803 - the argument's wire name
        return await implementation().render(conceptId)

    server.resources.add_template(TEMPLATE, read, complete)
    server.prompts.add(PROMPT, render, complete)


def _tool(implementation: Implementation, name: str) -> Any:
    async def call(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        return await implementation().tools[name](arguments, ctx)
    return call
