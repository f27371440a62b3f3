"""`list_categories` and `classify_text`: the classification contract of the vLLM semantic-router.

Field names are the router's contract and must not change. Results go out as a JSON text block (the
router reads `content[0].text`) and, for clients whose version has structured output, also as
`structuredContent` matching the declared output schema. The model loads in the background at
start-up; a classify_text call that arrives before it is ready waits for it rather than failing, while
list_categories needs only the taxonomy and answers at once. A full queue or a timed-out classification
maps to the core's SERVER_BUSY / REQUEST_TIMEOUT, so every adapter reports them the same way.
"""

from __future__ import annotations

from typing import Any

from hexmcp.core import ErrorCode, McpServer, ProtocolError, ToolContext, models

LIST_CATEGORIES_OUTPUT = {
    "type": "object",
    "properties": {
        "categories": {"type": "array", "items": {"type": "string"}},
        "category_system_prompts": {"type": "object", "additionalProperties": {"type": "string"}},
        "category_descriptions": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["categories", "category_system_prompts", "category_descriptions"],
}

CLASSIFY_OUTPUT = {
    "type": "object",
    "properties": {
        "class": {"type": "integer", "minimum": 0, "description": "index into list_categories' categories"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1, "description": "the top probability"},
        "model": {"type": "string", "description": "the model the router should use"},
        "use_reasoning": {"type": "boolean", "description": "whether the router should enable reasoning"},
        "probabilities": {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1},
                          "description": "one per category, in category order; sums to 1"},
        "entropy": {"type": "number", "minimum": 0,
                    "description": "Shannon entropy of the probabilities, in nats (natural log)"},
    },
    "required": ["class", "confidence", "model", "use_reasoning"],
}


def _classify_input_schema(max_chars: int, max_tokens: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": f"The text to classify (at most {max_chars} characters; "
                                                      f"the model reads only the first {max_tokens} tokens)."},
            "with_probabilities": {"type": "boolean", "default": False,
                                   "description": "Also return the probability of every category and the entropy."},
        },
        "required": ["text"],
    }


def register_classification_tools(server: McpServer, config: Any) -> Any:
    """Register both tools on `server`; returns the service (for health checks and background loading)."""
    from hexmcp.tools.embedding.inference_pool import RequestTimeoutError, ServiceOverloadedError

    from . import ClassificationInputError, ClassificationService

    service = ClassificationService.from_config(config)
    max_chars = config.max_text_chars

    async def list_categories(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        if not service.taxonomy_loaded:  # the taxonomy alone answers this: don't wait for the model
            await service.ensure_taxonomy()
        return service.list_categories()

    async def classify_text(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        # The arguments are checked once, by the service, before it waits for the model to load.
        try:
            return await service.classify(arguments["text"], with_probabilities=arguments.get("with_probabilities",
                                                                                              False),
                                          client=ctx.client_id)
        except ClassificationInputError as error:
            raise ProtocolError(ErrorCode.INVALID_PARAMS, f"Invalid arguments for tool 'classify_text': argument "
                                f"{error.field} {error.message}",
                                {"path": f"$.arguments.{error.field}", **error.details}) from None
        except ServiceOverloadedError as error:
            raise ProtocolError(ErrorCode.SERVER_BUSY, str(error)) from None
        except RequestTimeoutError as error:
            raise ProtocolError(ErrorCode.REQUEST_TIMEOUT, str(error)) from None

    read_only = models.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    server.tools.add("list_categories", list_categories, title="List categories",
                     description="List the categories classify_text chooses from, in class-index order, "
                                 "with each category's description and system prompt.",
                     input_schema={"type": "object", "properties": {}}, output_schema=LIST_CATEGORIES_OUTPUT,
                     annotations=read_only, schemas_checked_in_tests=True,
                     # Strings from a taxonomy checked when it loads; a property test checks the shape
                     # (ADR 0012). classify_text keeps the check: its floats come from the model.
                     output_checked_in_tests=True)
    server.tools.add("classify_text", classify_text, title="Classify text",
                     description=("Classify a text into one of the categories of list_categories, for routing. "
                                  "Returns the class index, a confidence (the top probability), the recommended "
                                  "model and whether to use reasoning; with_probabilities adds every category's "
                                  f"probability and the entropy (nats). Reads only the first {config.max_tokens} "
                                  f"tokens; texts over {max_chars} characters are rejected."),
                     input_schema=_classify_input_schema(max_chars, config.max_tokens), output_schema=CLASSIFY_OUTPUT,
                     annotations=read_only, schemas_checked_in_tests=True)
    return service
