"""The registrar's prompt and resource decorators take a title and a completer, as the registries do."""

from __future__ import annotations

import pytest

from hexmcp.core import McpServer
from hexmcp.core.registrar import Registrar

from ..support.peer import CoreClient

pytestmark = pytest.mark.anyio


async def colours(argument: str, typed: str, context: dict[str, str]) -> list[str]:
    return [c for c in ("red", "rose", "blue") if c.startswith(typed)]


def registered() -> McpServer:
    server = McpServer("t", "1")
    registrar = Registrar(server)

    @registrar.prompt(title="Paint", completer=colours)
    async def paint(colour: str) -> str:
        return colour

    @registrar.resource("paint://{colour}", title="A colour", completer=colours)
    async def swatch(colour: str) -> str:
        return colour

    @registrar.resource("paint://all", title="Every colour")
    async def every() -> str:
        return "red rose blue"

    return server


async def test_titles_and_completers_reach_the_lists_and_completion() -> None:
    client = CoreClient(registered())
    await client.initialize()
    assert (await client.ok("prompts/list"))["prompts"][0]["title"] == "Paint"
    assert (await client.ok("resources/list"))["resources"][0]["title"] == "Every colour"
    assert (await client.ok("resources/templates/list"))["resourceTemplates"][0]["title"] == "A colour"
    for ref in ({"type": "ref/prompt", "name": "paint"}, {"type": "ref/resource", "uri": "paint://{colour}"}):
        result = await client.ok("completion/complete", {"ref": ref, "argument": {"name": "colour", "value": "r"}})
        assert result["completion"]["values"] == ["red", "rose"]
