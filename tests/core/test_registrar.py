"""The registrar's resource and prompt decorators say what a hand-made definition says: a template's title
and argument completion, a prompt argument's description and completion."""

from __future__ import annotations

from typing import Annotated

import pytest

from hexmcp.core import McpServer
from hexmcp.core.registrar import Registrar

from ..support.peer import CoreClient, RecordingPeer

pytestmark = pytest.mark.anyio


async def colours(argument: str, value: str, context: dict[str, str]) -> list[str]:
    return [c for c in ("red", "green", "grey") if c.startswith(value)]


def _served() -> CoreClient:
    registrar = Registrar(McpServer("registrar-test", "0"))

    @registrar.resource("paint://{colour}", name="paint", title="A paint", completer=colours)
    async def paint(colour: str) -> str:
        return f"a tin of {colour}"

    @registrar.prompt("describe", completer=colours)
    async def describe(colour: Annotated[str, "The colour to describe."]) -> str:
        return f"Describe {colour}."

    return CoreClient(registrar.mcp, RecordingPeer())


async def test_a_template_has_its_title_and_completes_its_variables() -> None:
    client = _served()
    await client.initialize()
    [template] = (await client.ok("resources/templates/list"))["resourceTemplates"]
    assert template["title"] == "A paint"
    completed = await client.ok("completion/complete", {"ref": {"type": "ref/resource", "uri": "paint://{colour}"},
                                                         "argument": {"name": "colour", "value": "g"}})
    assert completed["completion"]["values"] == ["green", "grey"]


async def test_a_prompt_argument_has_its_description_and_completes() -> None:
    client = _served()
    await client.initialize()
    [prompt] = (await client.ok("prompts/list"))["prompts"]
    assert prompt["arguments"] == [{"name": "colour", "description": "The colour to describe.", "required": True}]
    completed = await client.ok("completion/complete", {"ref": {"type": "ref/prompt", "name": "describe"},
                                                         "argument": {"name": "colour", "value": "r"}})
    assert completed["completion"]["values"] == ["red"]


def test_a_fixed_resource_takes_no_completer() -> None:
    with pytest.raises(ValueError, match="placeholders"):
        Registrar(McpServer("registrar-test", "0")).resource("paint://red", completer=colours)
