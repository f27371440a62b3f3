"""The official MCP Python SDK as the client, over real stdio: initialize, tools, resources, prompts.

The SDK's `initialize()` always offers its latest handshake version, so older versions are negotiated
by sending the `initialize` request ourselves and `adopt`ing the answer, as the SDK does internally.
2026-07-28 goes through `discover()`. The server's stdin and stdout are teed to files, and after each
test every line the server wrote is replayed through the schema `Transcript`.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from hexmcp.core import versions

from ..fixtures.demo_server import GREETING, SERVER_NAME
from ..support import schemas
from ..support.wire import REPO_ROOT

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(40)]

SDK_HANDSHAKE_VERSIONS = [v for v in versions.HANDSHAKE_VERSIONS if v in HANDSHAKE_PROTOCOL_VERSIONS]
SDK_STATELESS_VERSIONS = [v for v in versions.STATELESS_VERSIONS if v in MODERN_PROTOCOL_VERSIONS]


def teed_demo_server(wire_dir: Path) -> StdioServerParameters:
    server = f"{shlex.quote(sys.executable)} -m tests.fixtures.demo_server"
    script = f"tee {wire_dir / 'in.jsonl'} | {server} | tee {wire_dir / 'out.jsonl'}"
    return StdioServerParameters(command="sh", args=["-c", script], cwd=REPO_ROOT)


def replay_through_schema(wire_dir: Path) -> int:
    """Check every server line against the schema, showing each answer its request just before it."""
    sent = {}
    for line in (wire_dir / "in.jsonl").read_text().splitlines():
        message = json.loads(line)
        if isinstance(message, dict) and "id" in message and "method" in message:
            sent[json.dumps(message["id"])] = message
    transcript = schemas.Transcript()
    lines = (wire_dir / "out.jsonl").read_text().splitlines()
    for line in lines:
        message = json.loads(line)
        request = sent.get(json.dumps(message.get("id"))) if "method" not in message else None
        if request is not None:
            transcript.sent(request)
        transcript.received(message)
    return len(lines)


async def handshake(session: ClientSession, version: str) -> types.InitializeResult:
    params = types.InitializeRequestParams(protocol_version=version, capabilities=types.ClientCapabilities(),
                                           client_info=types.Implementation(name="sdk-test", version="0"))
    result = await session.send_request(types.InitializeRequest(params=params), types.InitializeResult)
    session.adopt(result)
    await session.send_notification(types.InitializedNotification())
    return result


async def exercise(session: ClientSession) -> None:
    tools = await session.list_tools()
    names = {tool.name for tool in tools.tools}
    assert {"echo", "add", "slow"} <= names

    echoed = await session.call_tool("echo", {"text": "via the SDK"})
    assert echoed.content[0].text == "via the SDK"
    assert not echoed.is_error

    added = await session.call_tool("add", {"a": 20, "b": 22})
    assert json.loads(added.content[0].text) == {"sum": 42}

    failed = await session.call_tool("fail", {})
    assert failed.is_error

    read = await session.read_resource("demo://greeting")
    assert read.contents[0].text == GREETING

    prompt = await session.get_prompt("greet", {"name": "Ada"})
    assert "Ada" in prompt.messages[0].content.text


@pytest.mark.parametrize("version", SDK_HANDSHAKE_VERSIONS)
async def test_the_sdk_client_on_each_handshake_version(version: str, tmp_path: Path) -> None:
    async with stdio_client(teed_demo_server(tmp_path)) as (read, write):
        async with ClientSession(read, write) as session:
            result = await handshake(session, version)
            assert result.protocol_version == version
            assert result.server_info.name == SERVER_NAME
            await exercise(session)
    assert replay_through_schema(tmp_path) >= 7


async def test_the_sdk_default_initialize(tmp_path: Path) -> None:
    async with stdio_client(teed_demo_server(tmp_path)) as (read, write):
        async with ClientSession(read, write) as session:
            result = await session.initialize()
            assert result.protocol_version == versions.LATEST_HANDSHAKE_VERSION
            added = await session.call_tool("add", {"a": 1, "b": 2})
            assert added.structured_content == {"sum": 3}
    replay_through_schema(tmp_path)


@pytest.mark.parametrize("version", SDK_STATELESS_VERSIONS)
async def test_the_sdk_client_stateless(version: str, tmp_path: Path) -> None:
    async with stdio_client(teed_demo_server(tmp_path)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.discover()
            assert session.protocol_version == version
            await exercise(session)
    replay_through_schema(tmp_path)
