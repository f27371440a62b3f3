"""What clients see of the concept tools: the five tools, the `concept://{id}` resource template and the
`explain-concept` prompt, declared through the registrar's decorators as thin signatures whose bodies
call into handlers got from a function when used.

mcp_tools.py registers them over handlers made at once; first_use.py over handlers made on first use,
which is how `hexmcp stdio` registers them before its `initialize` answer. The
signatures are the same either way, so tools/list cannot tell the two apart. Their annotations are
evaluated here, so this module imports nothing heavy and has no `from __future__ import annotations`
(the tool decorator reads the return annotation as a type).
"""

import functools
from typing import Annotated, Any, Callable, Protocol

from hexmcp.core import models
from hexmcp.core.prompts import Completer
from hexmcp.core.registrar import Registrar

from .schemas import CONCEPT_URI, ConceptItems, ExplainedConcept, GraphItems, ResolvedConcepts, ScoreItems
from .service import ConceptService
from .vocabulary import (COSINE_WEIGHT, DEFINES_WEIGHT, DERIVED_RELATIONS, MENTIONS_WEIGHT, RESOLVED_SCORE,
                         SEMANTIC_TITLE_SHARE, Metric)

MAX_TEXT_CHARS = 100_000
MAX_TERM_CHARS = 200
MAX_DEPTH = 3
DEFAULT_GRAPH_LIMIT = 50
MAX_GRAPH_LIMIT = 500
NEIGHBOURHOOD_DEPTH = 2  # analyzeGraph with a conceptId scores the concepts within this many hops
READ_ONLY = models.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

ConceptId = Annotated[str, "A concept id (from resolveConcept).", {"minLength": 1, "maxLength": 200}]
PromptConceptId = Annotated[str, "A concept id (see resolveConcept; completion offers ids)."]
GraphLimit = Annotated[int, "The most nodes to answer, the concept included.", {"minimum": 1, "maximum": MAX_GRAPH_LIMIT}]
ScoreLimit = Annotated[int, "The most concepts to answer, best first.", {"minimum": 1, "maximum": MAX_GRAPH_LIMIT}]
# An argument a client may leave out but not send as null has its own type as hint and None as default
# (the derived schema then has neither a "default" nor null): hence the `type: ignore`s below.


class Handlers(Protocol):
    """What the definitions call into (mcp_tools.ConceptHandlers is one), with the arguments as sent."""

    async def resolve_concept(self, term: str) -> ResolvedConcepts: ...

    async def explain_concept(self, concept_id: str, passages: int) -> ExplainedConcept: ...

    async def query_graph(self, concept_id: str, depth: int, relations: list[str] | None, limit: int) -> GraphItems: ...

    async def analyze_graph(self, metric: str, concept_id: str | None, limit: int) -> ScoreItems: ...

    async def link_entities(self, text: str, min_confidence: float) -> ConceptItems: ...

    async def read(self, id: str) -> str: ...  # noqa: A002 - the concept://{id} template's variable

    async def render(self, concept_id: str) -> list[models.PromptMessage]: ...  # the explain-concept prompt


Implementation = Callable[[], Handlers]
ToolDecorator = Callable[..., Callable[[Callable[..., Any]], Callable[..., Any]]]  # registrar.tool, partly applied


def register_definitions(registrar: Registrar, service: ConceptService, implementation: Implementation) -> None:
    """Every tool, the template and the prompt, each calling into `implementation()` (the handlers over
    `service`) when used; tools/list lists the tools in this order."""
    # All five are read-only, and tests/tools/test_builtin_tool_schemas.py checks their schemas.
    tool = functools.partial(registrar.tool, annotations=READ_ONLY, schemas_checked_in_tests=True)
    for register in (_resolve_concept, _explain_concept, _query_graph, _analyze_graph, _link_entities):
        register(tool, implementation)
    complete = _concept_ids(service)
    _concept_resource(registrar, implementation, complete)
    _explain_concept_prompt(registrar, implementation, complete)


def _resolve_concept(tool: ToolDecorator, implementation: Implementation) -> None:
    @tool("resolveConcept", title="Resolve a term to a concept", description=(
        "Find the concept a term names: exact id, alias, fuzzy spelling, then meaning, in that order. "
        "items[0] is the best match, then up to 5 alternatives; each has score (0..1: id 1, alias "
        f"0.95-0.98, fuzzy 0.9 x spelling similarity, semantic = {SEMANTIC_TITLE_SHARE:g} x the title's cosine + "
        f"{1 - SEMANTIC_TITLE_SHARE:g} x the best defining passage's cosine, at most 0.9) and matched "
        f"(how). resolved is false when the best score is under {RESOLVED_SCORE}: the items are "
        "then only the nearest candidates."))
    async def resolve_concept(term: Annotated[str, "A name, alias, misspelling or description of a concept.",
                                              {"minLength": 1, "maxLength": MAX_TERM_CHARS}]) -> ResolvedConcepts:
        return await implementation().resolve_concept(term)


def _explain_concept(tool: ToolDecorator, implementation: Implementation) -> None:
    @tool("explainConcept", title="Explain a concept with cited passages", description=(
        "The concept (summary quoted from the corpus, with its citation), its best supporting "
        f"passages (score 0..1: {DEFINES_WEIGHT:g} x how strongly the passage defines it + {COSINE_WEIGHT:g} x "
        f"cosine + {MENTIONS_WEIGHT:g} x min(1, mentions/3), each "
        "with document, offsets and index version) and its nearest related concepts (relation and "
        "weight)."))
    async def explain_concept(conceptId: ConceptId,  # noqa: N803 - the arguments' wire names
                              passages: Annotated[int, "How many supporting passages to answer, best first.",
                                                  {"minimum": 1, "maximum": 10}] = 3) -> ExplainedConcept:
        return await implementation().explain_concept(conceptId, passages)


def _query_graph(tool: ToolDecorator, implementation: Implementation) -> None:
    @tool("queryGraph", title="The concept graph around a concept", description=(
        "A graph item: nodes (concepts and the documents that define them, with their hop distance) "
        "and typed, weighted edges (weight 0..1) within `depth` hops, strongest edges first, at most "
        "`limit` nodes (truncated + note when cut). Derived relations: "
        f"{', '.join(DERIVED_RELATIONS)}; a glossary adds its own."))
    async def query_graph(conceptId: ConceptId,  # noqa: N803
                          depth: Annotated[int, "How many hops from the concept to follow.",
                                           {"minimum": 1, "maximum": MAX_DEPTH}] = 1,
                          relations: Annotated[list[Annotated[str, {"minLength": 1}]],
                                               "Only follow these relation kinds (default: all).",
                                               {"maxItems": 32}] = None,  # type: ignore[assignment]
                          limit: GraphLimit = DEFAULT_GRAPH_LIMIT) -> GraphItems:
        return await implementation().query_graph(conceptId, depth, relations, limit)


def _analyze_graph(tool: ToolDecorator, implementation: Implementation) -> None:
    @tool("analyzeGraph", title="Most influential concepts", description=(
        "Score items for concepts over the whole graph, or the concepts within 2 hops of conceptId: "
        "pagerank, betweenness or degree (score = value / the largest value, 0..1), or communities "
        "(Louvain; score = the share of the concept's edge weight inside its community)."))
    async def analyze_graph(metric: Annotated[Metric, "What to score the concepts by."],
                            conceptId: Annotated[str, "Only the concepts within 2 hops of this concept id (from "  # noqa: N803
                                                      "resolveConcept); default: the whole graph.",
                                                 {"minLength": 1, "maxLength": 200}] = None,  # type: ignore[assignment]
                            limit: ScoreLimit = 10) -> ScoreItems:
        return await implementation().analyze_graph(metric, conceptId, limit)


def _link_entities(tool: ToolDecorator, implementation: Implementation) -> None:
    @tool("linkEntities", title="Link a text's mentions to concepts", description=(
        "The concepts a text mentions, each with its character spans (start, end: Python string "
        "offsets into the text) and confidence 0..1 = concept confidence x match quality x "
        "specificity (names found everywhere in the corpus count less). minConfidence drops weaker "
        "spans."))
    async def link_entities(text: Annotated[str, f"The text whose mentions of concepts to find (at most "
                                                 f"{MAX_TEXT_CHARS} characters).", {"maxLength": MAX_TEXT_CHARS}],
                            minConfidence: Annotated[float, "Drop spans whose confidence is below this.",  # noqa: N803
                                                     {"minimum": 0, "maximum": 1}] = 0,
                            ) -> ConceptItems:
        return await implementation().link_entities(text, minConfidence)


def _concept_ids(service: ConceptService) -> Completer:
    """Completion of a concept id: those starting with the value typed, or whose title does, surest first."""
    async def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:
        base = service.loaded  # argument completion never waits for (or loads) the concept base
        if base is None:
            return []
        prefix = value.strip().lower()
        ranked = sorted(base.concepts.values(), key=lambda c: (-c.confidence, c.id))
        return [c.id for c in ranked if c.id.startswith(prefix) or c.title.lower().startswith(prefix)]
    return complete


def _concept_resource(registrar: Registrar, implementation: Implementation, complete: Completer) -> None:
    @registrar.resource(CONCEPT_URI, name="concept", title="A concept of the knowledge base",
                        description="A concept's title, aliases, cited summary, supporting passages and related "
                                    "concepts (Markdown).", mime_type="text/markdown", completer=complete)
    async def read(id: str) -> str:  # noqa: A002 - the template variable's name
        return await implementation().read(id)


def _explain_concept_prompt(registrar: Registrar, implementation: Implementation, complete: Completer) -> None:
    @registrar.prompt("explain-concept", title="Explain a concept from its sources", completer=complete,
                      description="A grounded explanation request: the concept's summary and its best passages, "
                                  "numbered for citation.")
    async def render(conceptId: PromptConceptId) -> list[models.PromptMessage]:  # noqa: N803 - the wire name
        return await implementation().render(conceptId)
