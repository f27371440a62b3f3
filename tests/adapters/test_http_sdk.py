"""The official MCP SDK's clients against a live hexmcp HTTP server: the interoperability that matters."""

from __future__ import annotations

import asyncio

import mcp_types as types
import pytest
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from hexmcp.core import versions
from tests.adapters.http_live import live_server
from tests.fixtures.demo_server import SECRET, build_demo_server

pytestmark = pytest.mark.timeout(30)


@pytest.fixture(scope="module")
def live():
    with live_server(build_demo_server()) as server:
        yield server


async def _elicit(context, params):
    return types.ElicitResult(action="accept", content={"name": "Ada"})


def test_handshake_session_with_progress_logging_and_elicitation(live) -> None:
    logs: list[str] = []
    progress: list[float] = []

    async def on_log(params) -> None:
        logs.append(params.data)

    async def on_progress(value, total, message) -> None:
        progress.append(value)

    async def scenario() -> None:
        async with streamable_http_client(live.url) as streams:
            async with ClientSession(streams[0], streams[1], elicitation_callback=_elicit,
                                     logging_callback=on_log) as session:
                result = await session.initialize()
                assert result.protocol_version == versions.LATEST_HANDSHAKE_VERSION
                names = [tool.name for tool in (await session.list_tools()).tools]
                assert "echo" in names
                echoed = await session.call_tool("echo", {"text": "hi"})
                assert echoed.content[0].text == "hi"
                slow = await session.call_tool("slow", {"seconds": 0.1}, progress_callback=on_progress)
                assert slow.content[0].text == "slept 0.1"
                greeted = await session.call_tool("ask_name", {})  # elicitation/create over the POST's SSE stream
                assert greeted.content[0].text == "Hello, Ada!"
                await session.set_logging_level("info")
                await session.call_tool("chatty", {})
                failed = await session.call_tool("fail", {})
                assert failed.is_error and SECRET not in failed.content[0].text

    asyncio.run(scenario())
    assert progress == [1, 2, 3]
    assert logs == ["a info message", "a error message"]


def test_concurrent_calls_share_one_session(live) -> None:
    async def scenario() -> list[str]:
        async with streamable_http_client(live.url) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                results = await asyncio.gather(*(session.call_tool("echo", {"text": str(i)}) for i in range(20)))
                return [r.content[0].text for r in results]

    assert asyncio.run(scenario()) == [str(i) for i in range(20)]


@pytest.mark.parametrize("mode", ["auto", versions.V2026_07_28])
def test_modern_client_speaks_2026(live, mode: str) -> None:
    async def scenario() -> None:
        async with Client(live.url, mode=mode, elicitation_callback=_elicit) as client:
            tools = await client.list_tools()
            assert any(tool.name == "add" for tool in tools.tools)
            added = await client.call_tool("add", {"a": 2, "b": 3})
            assert added.structured_content == {"sum": 5}
            greeted = await client.call_tool("ask_name", {})  # an InputRequiredResult round trip
            assert greeted.content[0].text == "Hello, Ada!"

    asyncio.run(scenario())


def test_legacy_client_mode(live) -> None:
    async def scenario() -> None:
        async with Client(live.url, mode="legacy") as client:
            assert (await client.call_tool("echo", {"text": "legacy"})).content[0].text == "legacy"

    asyncio.run(scenario())
