"""One result, shaped for each protocol version: fields and content kinds a version lacks are left out."""

from __future__ import annotations

import pytest

from hexmcp.core import versions

from ..support.peer import CoreClient

pytestmark = pytest.mark.anyio

WITHOUT_STRUCTURED = [v for v in versions.HANDSHAKE_VERSIONS if not versions.features(v).structured_output]
WITH_STRUCTURED = [v for v in versions.HANDSHAKE_VERSIONS if versions.features(v).structured_output]
WITHOUT_LINKS = [v for v in versions.HANDSHAKE_VERSIONS if not versions.features(v).resource_links]
WITH_LINKS = [v for v in versions.HANDSHAKE_VERSIONS if versions.features(v).resource_links]


def test_the_version_table_has_both_kinds() -> None:
    assert WITHOUT_STRUCTURED and WITH_STRUCTURED and WITHOUT_LINKS and WITH_LINKS


@pytest.mark.parametrize("version", WITHOUT_STRUCTURED)
async def test_old_versions_see_no_output_schema_or_title(client: CoreClient, version: str) -> None:
    await client.initialize(version)
    tools = await all_tools(client)
    assert tools["add"].keys() >= {"name", "inputSchema"}
    assert not any("outputSchema" in t or "title" in t for t in tools.values())
    result = await client.ok("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    assert "structuredContent" not in result
    assert result["content"][0]["text"] == '{"sum":3}'


@pytest.mark.parametrize("version", WITH_STRUCTURED)
async def test_newer_versions_see_structured_output(client: CoreClient, version: str) -> None:
    await client.initialize(version)
    tools = await all_tools(client)
    assert "outputSchema" in tools["add"]
    assert tools["echo"]["title"] == "Echo"
    result = await client.ok("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    assert result["structuredContent"] == {"sum": 3}


@pytest.mark.parametrize("version", WITHOUT_LINKS)
async def test_a_resource_link_degrades_to_text(client: CoreClient, version: str) -> None:
    await client.initialize(version)
    result = await client.ok("tools/call", {"name": "link", "arguments": {"name": "apple"}})
    [block] = result["content"]
    assert block["type"] == "text"
    assert "demo://items/apple" in block["text"]


@pytest.mark.parametrize("version", WITH_LINKS)
async def test_a_resource_link_is_sent_as_such(client: CoreClient, version: str) -> None:
    await client.initialize(version)
    result = await client.ok("tools/call", {"name": "link", "arguments": {"name": "apple"}})
    assert result["content"][0]["type"] == "resource_link"


@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
async def test_server_info_fields_follow_the_version(client: CoreClient, version: str) -> None:
    result = await client.initialize(version)
    assert ("title" in result["serverInfo"]) == (version >= versions.V2025_06_18)


async def all_tools(client: CoreClient) -> dict[str, dict]:
    tools: dict[str, dict] = {}
    cursor = None
    while True:
        page = await client.ok("tools/list", {"cursor": cursor} if cursor else {})
        tools.update({t["name"]: t for t in page["tools"]})
        if not (cursor := page.get("nextCursor")):
            return tools
