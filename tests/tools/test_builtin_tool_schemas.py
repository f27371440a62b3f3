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


def _untyped(schema: dict, path: str) -> list[str]:
    """Where a schema leaves out `type`: every property, array item and union option of it."""
    found = [] if "type" in schema or "anyOf" in schema or "$ref" in schema else [path]
    for option in schema.get("anyOf", []):
        found += _untyped(option, f"{path}|")
    for name, value in schema.get("properties", {}).items():
        found += _untyped(value, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        found += _untyped(schema["items"], f"{path}[]")
    return found


def test_every_built_in_input_schema_types_each_value() -> None:
    """Hosts such as VS Code hand a tool's input schema to the model provider as it is, and some providers'
    function declarations (Gemini's) refuse a value whose schema has no `type`, an enum's included, and with
    it every tool of the request."""
    server = composed(cli.parse_args(["stdio"])).server
    untyped = {tool.name: _untyped(tool.input_schema, "$") for tool in server.tools.definitions()}
    assert {name: paths for name, paths in untyped.items() if paths} == {}
