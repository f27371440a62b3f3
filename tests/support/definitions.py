"""What a server lists (tools, prompts, resources, templates) as a client reads it, next to a snapshot of
it taken before the built-in packs moved to the registrar's decorators, so the move keeps the wire."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hexmcp.core import McpServer
from hexmcp.core.convert import to_wire
from hexmcp.core.versions import LATEST_VERSION

SNAPSHOTS = Path(__file__).parent.parent / "data" / "pack-definitions"


def listed(server: McpServer) -> dict[str, Any]:
    def wire(items: list[Any]) -> list[Any]:
        return [to_wire(item, LATEST_VERSION) for item in items]

    return {"tools": wire(server.tools.definitions()), "prompts": wire(server.prompts.definitions()),
            "resources": wire(server.resources.definitions()),
            "templates": wire(server.resources.template_definitions())}


def snapshot(name: str) -> dict[str, Any]:
    return json.loads((SNAPSHOTS / f"{name}.json").read_text(encoding="utf-8"))


def write_snapshot(name: str, server: McpServer) -> None:
    """How the snapshots were made (run once, by hand, on the code before the change)."""
    text = json.dumps(listed(server), indent=1, sort_keys=True, ensure_ascii=False)
    (SNAPSHOTS / f"{name}.json").write_text(text + "\n", encoding="utf-8")


def spelled_as_derived(schema: Any) -> Any:
    """An old hand-written schema spelled as the derived schemas spell the same values: `{"type": ["string",
    "null"]}` as `anyOf` of one type each (what `str | None` gives), and an enum whose values share one JSON
    type with that `type` beside it (what a `Literal` or an `Enum` gives; core/schemas/from_types.py)."""
    if isinstance(schema, list):
        return [spelled_as_derived(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    spelled = {key: spelled_as_derived(value) for key, value in schema.items()}
    if isinstance(spelled.get("type"), list):
        spelled["anyOf"] = [{"type": name} for name in spelled.pop("type")]
    values = spelled.get("enum")
    if isinstance(values, list) and values and "type" not in spelled and all(type(v) is str for v in values):
        spelled["type"] = "string"
    return spelled
