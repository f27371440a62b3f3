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


def nullable_as_any_of(schema: Any) -> Any:
    """`{"type": ["string", "null"]}` spelled as schemas derived from `str | None` spell it, `anyOf` of one
    type each: the same set of values, the one way the derived schemas write an old one differently."""
    if isinstance(schema, list):
        return [nullable_as_any_of(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    spelled = {key: nullable_as_any_of(value) for key, value in schema.items()}
    if isinstance(spelled.get("type"), list):
        spelled["anyOf"] = [{"type": name} for name in spelled.pop("type")]
    return spelled
