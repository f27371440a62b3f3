"""`list_categories` and `classify_text`: the classification contract of the vLLM semantic-router.

Field names are the router's contract and must not change. Results go out as a JSON text block (the
router reads `content[0].text`) and, for clients whose version has structured output, also as
`structuredContent` matching the declared output schema. The model loads in the background at
start-up; a classify_text call that arrives before it is ready waits for it rather than failing, while
list_categories needs only the taxonomy and answers at once. A full queue or a timed-out classification
maps to the core's SERVER_BUSY / REQUEST_TIMEOUT, so every adapter reports them the same way.
"""

# No `from __future__ import annotations`: classify_text's argument description holds the configured
# limits, so its annotations must be evaluated where it is defined, with those values.

from typing import Annotated, Any, NotRequired, TypedDict

from hexmcp.core import ErrorCode, McpServer, ProtocolError, ToolContext, models
from hexmcp.core.registrar import Registrar

from .errors import ClassificationInputError
from .service import ClassificationService


class CategoryListing(TypedDict):
    categories: list[str]
    category_system_prompts: dict[str, str]
    category_descriptions: dict[str, str]


# The functional form: `class` is a keyword.
Classification = TypedDict("Classification", {
    "class": Annotated[int, "index into list_categories' categories", {"minimum": 0}],
    "confidence": Annotated[float, "the top probability", {"minimum": 0, "maximum": 1}],
    "model": Annotated[str, "the model the router should use"],
    "use_reasoning": Annotated[bool, "whether the router should enable reasoning"],
    "probabilities": NotRequired[Annotated[list[Annotated[float, {"minimum": 0, "maximum": 1}]],
                                           "one per category, in category order; sums to 1"]],
    "entropy": NotRequired[Annotated[float, "Shannon entropy of the probabilities, in nats (natural log)",
                                     {"minimum": 0}]],
})

READ_ONLY = models.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def register_classification_tools(server: McpServer, config: Any) -> ClassificationService:
    """Register both tools on `server`; returns the service (for health checks and background loading)."""
    service = ClassificationService.from_config(config)
    registrar = Registrar(server)
    _register_list_categories(registrar, service)
    _register_classify_text(registrar, service, config)
    return service


def _register_list_categories(registrar: Registrar, service: ClassificationService) -> None:
    # Strings from a taxonomy checked when it loads; a property test checks the shape.
    # classify_text keeps the check: its floats come from the model.
    @registrar.tool("list_categories", title="List categories", annotations=READ_ONLY,
                    description="List the categories classify_text chooses from, in class-index order, "
                                "with each category's description and system prompt.",
                    schemas_checked_in_tests=True, output_checked_in_tests=True)
    async def list_categories() -> CategoryListing:
        if not service.taxonomy_loaded:  # the taxonomy alone answers this: don't wait for the model
            await service.ensure_taxonomy()
        return service.list_categories()


def _register_classify_text(registrar: Registrar, service: ClassificationService, config: Any) -> None:
    from hexmcp.tools.embedding.inference_pool import RequestTimeoutError, ServiceOverloadedError

    max_chars, max_tokens = config.max_text_chars, config.max_tokens

    @registrar.tool("classify_text", title="Classify text", annotations=READ_ONLY,
                    description="Classify a text into one of the categories of list_categories, for routing. "
                                "Returns the class index, a confidence (the top probability), the recommended "
                                "model and whether to use reasoning; with_probabilities adds every category's "
                                f"probability and the entropy (nats). Reads only the first {max_tokens} "
                                f"tokens; texts over {max_chars} characters are rejected.",
                    schemas_checked_in_tests=True)
    async def classify_text(
        # The limit is declared so a client sees it; the service checks it again (its message, with the
        # limit and the length in data, is the one the core's schema check words the same way).
        text: Annotated[str, f"The text to classify (at most {max_chars} characters; "
                             f"the model reads only the first {max_tokens} tokens).", {"maxLength": max_chars}],
        with_probabilities: Annotated[bool, "Also return the probability of every category and the entropy."] = False,
        *, ctx: ToolContext,
    ) -> Classification:
        # The arguments are checked once, by the service, before it waits for the model to load.
        try:
            return await service.classify(text, with_probabilities=with_probabilities, client=ctx.client_id)
        except ClassificationInputError as error:
            raise ProtocolError(ErrorCode.INVALID_PARAMS, f"Invalid arguments for tool 'classify_text': argument "
                                f"{error.field} {error.message}",
                                {"path": f"$.arguments.{error.field}", **error.details}) from None
        except ServiceOverloadedError as error:
            raise ProtocolError(ErrorCode.SERVER_BUSY, str(error)) from None
        except RequestTimeoutError as error:
            raise ProtocolError(ErrorCode.REQUEST_TIMEOUT, str(error)) from None
