"""The check the built-in tools skip at start-up (`schemas_checked_in_tests`, ADR 0007) runs here: every
tool the composition root registers has input and output schemas that are valid JSON Schema."""

from __future__ import annotations

from hexmcp.app import cli
from hexmcp.app.serving import composed
from hexmcp.core.schemas.validation import LazyValidator, compile_validator


def test_every_built_in_tool_schema_is_valid_json_schema() -> None:
    args = cli.parse_args(["stdio"])
    server = composed(args).server
    names = [tool.name for tool in server.tools.definitions()]
    assert {"list_categories", "classify_text", "search", "fetch", "listDocuments", "searchPassages", "listModels",
            "routeCompletion", "resolveConcept", "explainConcept", "queryGraph", "analyzeGraph",
            "linkEntities"} <= set(names)
    for name in names:
        tool = server.tools.get(name)
        assert isinstance(tool.validator, LazyValidator), name  # registered unchecked: so checked here
        compile_validator(tool.definition.input_schema)  # raises SchemaError for an invalid schema
        if tool.definition.output_schema is not None:
            compile_validator(tool.definition.output_schema)
