"""hexmcp.client against the official SDK's server (MCPServer) over stdio and Streamable HTTP."""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator

import pytest

from bench.http import free_port, start, stop
from hexmcp.client import McpClient, Target
from hexmcp.core import versions

from .sdk_server import GREETING
from .servers import SDK_SERVER

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]


@contextlib.contextmanager
def sdk_http(*flags: str) -> Iterator[str]:
    port = free_port()
    process = start([sys.executable, str(SDK_SERVER), "--port", str(port), *flags], port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


@pytest.fixture(scope="module", params=["sse", "json"])
def sdk_url(request) -> Iterator[tuple[str, bool]]:
    """The SDK server's URL, and whether it answers with SSE (and so streams progress)."""
    with sdk_http(*(["--json"] if request.param == "json" else [])) as url:
        yield url, request.param == "sse"


SDK_STDIO = Target.stdio(f"{sys.executable} {SDK_SERVER}")


async def exercise(client: McpClient, *, streams_progress: bool = True) -> None:
    assert client.server_info is not None and client.server_info.name == "sdk-demo"
    assert {tool.name for tool in await client.all_tools()} == {"echo", "add", "slow"}
    assert (await client.call_tool("echo", {"text": "héllo"})).content[0].text == "héllo"
    added = await client.call_tool("add", {"a": 20, "b": 22})
    assert added.structured_content == {"sum": 42} and not added.is_error
    progress: list[float] = []
    slow = await client.call_tool("slow", {"steps": 3}, progress=lambda value, total, message: progress.append(value))
    assert slow.content[0].text == "3 steps"
    assert progress == ([1, 2, 3] if streams_progress else [])  # the SDK's JSON mode drops a request's progress
    assert (await client.read_resource("sdk://greeting")).contents[0].text == GREETING
    assert "Ada" in (await client.get_prompt("greet", {"name": "Ada"})).messages[0].content.text
    assert [prompt.name for prompt in await client.all_prompts()] == ["greet"]
    await client.ping()


@pytest.mark.parametrize("version", [*versions.HANDSHAKE_VERSIONS, versions.V2026_07_28])
async def test_sdk_server_over_stdio(version: str) -> None:
    async with McpClient(SDK_STDIO, protocol_version=version) as client:
        assert client.protocol_version == version
        await exercise(client)


@pytest.mark.parametrize("version", [versions.V2024_11_05, versions.LATEST_HANDSHAKE_VERSION])
async def test_sdk_server_over_streamable_http(sdk_url: tuple[str, bool], version: str) -> None:
    url, sse = sdk_url
    async with McpClient(url, protocol_version=version) as client:
        assert client.protocol_version == version
        await exercise(client, streams_progress=sse)
