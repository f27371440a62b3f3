"""Resources (fixed and templated), prompts, and argument completion."""

from __future__ import annotations

import pytest

from hexmcp.core import ErrorCode, ProtocolError

from ..fixtures.demo_server import GREETING, ITEMS
from ..support.peer import CoreClient

pytestmark = pytest.mark.anyio


async def test_fixed_and_template_resources_are_listed(client: CoreClient) -> None:
    await client.initialize()
    assert [r["uri"] for r in (await client.ok("resources/list"))["resources"]] == ["demo://greeting"]
    templates = (await client.ok("resources/templates/list"))["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["demo://items/{item_id}"]


async def test_a_fixed_resource_is_read(client: CoreClient) -> None:
    await client.initialize()
    result = await client.ok("resources/read", {"uri": "demo://greeting"})
    assert result["contents"] == [{"uri": "demo://greeting", "text": GREETING, "mimeType": "text/plain"}]


async def test_a_template_resource_is_read_with_its_variables(client: CoreClient) -> None:
    await client.initialize()
    result = await client.ok("resources/read", {"uri": "demo://items/apple"})
    assert result["contents"][0]["text"] == ITEMS["apple"]


async def test_an_unknown_resource_is_resource_not_found(client: CoreClient) -> None:
    await client.initialize()
    rejection = await client.rejected("resources/read", {"uri": "demo://nothing/here"})
    assert rejection.code is ErrorCode.RESOURCE_NOT_FOUND
    assert rejection.data["uri"] == "demo://nothing/here"


async def test_subscribe_and_unsubscribe(client: CoreClient) -> None:
    await client.initialize()
    assert await client.ok("resources/subscribe", {"uri": "demo://greeting"}) == {}
    assert "demo://greeting" in client.session.subscriptions
    assert await client.ok("resources/unsubscribe", {"uri": "demo://greeting"}) == {}
    assert "demo://greeting" not in client.session.subscriptions


async def test_prompts_are_listed_with_their_arguments(client: CoreClient) -> None:
    await client.initialize()
    [prompt] = (await client.ok("prompts/list"))["prompts"]
    assert {a["name"]: a.get("required") for a in prompt["arguments"]} == {"name": True, "style": False}


async def test_a_prompt_renders(client: CoreClient) -> None:
    await client.initialize()
    result = await client.ok("prompts/get", {"name": "greet", "arguments": {"name": "Ada", "style": "pirate"}})
    assert result["messages"] == [{"role": "user", "content": {"type": "text",
                                                                "text": "Write a pirate greeting for Ada."}}]


async def test_a_missing_required_prompt_argument_is_invalid_params(client: CoreClient) -> None:
    await client.initialize()
    rejection = await client.rejected("prompts/get", {"name": "greet", "arguments": {"style": "poem"}})
    assert rejection.code is ErrorCode.INVALID_PARAMS
    assert rejection.data["path"] == "$.arguments.name"


async def test_an_unknown_prompt_is_invalid_params(client: CoreClient) -> None:
    await client.initialize()
    assert (await client.rejected("prompts/get", {"name": "nope"})).code is ErrorCode.INVALID_PARAMS


async def test_prompt_argument_completion(client: CoreClient) -> None:
    await client.initialize()
    result = await client.ok("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"},
                                                     "argument": {"name": "style", "value": "p"}})
    assert result["completion"]["values"] == ["plain", "pirate", "poem"]
    assert result["completion"]["hasMore"] is False


async def test_resource_template_completion(client: CoreClient) -> None:
    await client.initialize()
    result = await client.ok("completion/complete", {"ref": {"type": "ref/resource", "uri": "demo://items/{item_id}"},
                                                     "argument": {"name": "item_id", "value": "b"}})
    assert result["completion"]["values"] == ["banana"]


async def test_completion_of_an_unknown_reference_type_is_invalid_params(client: CoreClient) -> None:
    await client.initialize()
    rejection = await client.rejected("completion/complete", {"ref": {"type": "ref/tool", "name": "x"},
                                                              "argument": {"name": "a", "value": ""}})
    assert rejection.code is ErrorCode.INVALID_PARAMS


async def test_removing_a_prompt_and_a_template_tells_the_listeners_once() -> None:
    from hexmcp.core import models
    from hexmcp.core.prompts import PromptRegistry
    from hexmcp.core.resources import ResourceRegistry

    async def render() -> str:
        return "hi"

    prompts, resources, changes = PromptRegistry(), ResourceRegistry(), []
    prompts.listeners.append(lambda: changes.append("prompts"))
    resources.listeners.append(lambda: changes.append("resources"))
    prompts.add(models.Prompt(name="p"), render)
    resources.add_template(models.ResourceTemplate(uri_template="x://{a}", name="t"), render)
    changes.clear()
    for _ in range(2):  # the second time there is nothing to remove, and nobody is told
        prompts.remove("p")
        resources.remove_template("x://{a}")
    assert changes == ["prompts", "resources"]
    assert prompts.definitions() == [] and resources.template_definitions() == []
    with pytest.raises(ProtocolError) as gone:
        await resources.read("x://1")
    assert gone.value.code is ErrorCode.RESOURCE_NOT_FOUND
