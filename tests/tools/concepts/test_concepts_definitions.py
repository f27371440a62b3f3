"""What clients list of the concept tools, their template and their prompt is what it was when the schemas
were written by hand (data/listed_definitions.json, listed before the tools moved to the registrar's
decorators): the same names, titles, annotations, descriptions and schemas, up to the spelling of two
equivalent JSON Schema forms a type gives differently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hexmcp.core import McpServer
from hexmcp.tools.concepts.first_use import register_concept_tools_on_first_use

from tests.support.peer import CoreClient, RecordingPeer

LISTED_BEFORE = Path(__file__).parent / "data" / "listed_definitions.json"


def canonical(schema: Any) -> Any:
    """`{"const": x}` as `{"enum": [x]}` (what `Literal[x]` gives), `{"type": [a, b]}` as `anyOf` of
    each (what `a | b` gives), and an enum of strings without the `"type": "string"` a Literal adds,
    everywhere: each pair validates exactly the same values."""
    if isinstance(schema, list):
        return [canonical(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    found = {key: canonical(value) for key, value in schema.items()}
    if "const" in found:
        found["enum"] = [found.pop("const")]
    if found.get("type") == "string" and all(isinstance(value, str) for value in found.get("enum", [None])):
        del found["type"]
    if isinstance(found.get("type"), list):
        found["anyOf"] = [{"type": kind} for kind in found.pop("type")]
    return found


def test_canonical_spells_the_equivalent_forms_alike() -> None:
    assert canonical({"const": "graph"}) == canonical({"enum": ["graph"]})
    assert canonical({"type": ["string", "null"]}) == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert canonical({"type": "string", "enum": ["a"]}) == {"enum": ["a"]}
    assert canonical({"type": "string"}) == {"type": "string"}


@pytest.mark.anyio
async def test_the_definitions_are_listed_as_before_the_decorators() -> None:
    server = McpServer("t", "0")
    register_concept_tools_on_first_use(server, knowledge=None)  # type: ignore[arg-type]  # listing never uses it
    client = CoreClient(server, RecordingPeer())
    await client.initialize()
    listed = {"tools": (await client.ok("tools/list", {}))["tools"],
              "prompts": (await client.ok("prompts/list", {}))["prompts"],
              "resourceTemplates": (await client.ok("resources/templates/list", {}))["resourceTemplates"]}
    before = json.loads(LISTED_BEFORE.read_text(encoding="utf-8"))
    assert [tool["name"] for tool in listed["tools"]] == [tool["name"] for tool in before["tools"]]
    assert canonical(listed) == canonical(before)
