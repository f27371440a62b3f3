"""hexmcp.client against a real hexmcp server on every transport: the same calls, the same answers."""

from __future__ import annotations

import asyncio

import pytest

from hexmcp.client import ClientError, ClientErrorCode, McpClient
from hexmcp.client.transports.stdio import StdioWire
from hexmcp.core import versions

from ..fixtures.demo_server import GREETING, SECRET, SERVER_NAME
from ..fixtures.ws_live import NEW_TOOL
from .servers import STREAMING, TRANSPORTS, Cancellations, live_targets

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def client_for(live, transport: str, **options) -> McpClient:
    if transport == "http-stateless":
        options.setdefault("protocol_version", versions.V2026_07_28)
    return McpClient(live.target(transport), **options)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_lists_calls_reads_and_gets_on_every_transport(live, transport: str) -> None:
    async with client_for(live, transport) as client:
        assert client.server_info is not None and client.server_info.name == SERVER_NAME
        expected_version = versions.V2026_07_28 if transport == "http-stateless" else versions.LATEST_HANDSHAKE_VERSION
        assert client.protocol_version == expected_version
        tools = {tool.name for tool in await client.all_tools()}  # the demo server pages by 2: cursors followed
        assert {"echo", "add", "slow", "fail", "ask_name"} <= tools
        echoed = await client.call_tool("echo", {"text": "héllo ✓"})
        assert echoed.content[0].text == "héllo ✓" and not echoed.is_error
        added = await client.call_tool("add", {"a": 2, "b": 40})
        assert added.structured_content == {"sum": 42}
        read = await client.read_resource("demo://greeting")
        assert read.contents[0].text == GREETING
        prompt = await client.get_prompt("greet", {"name": "Ada"})
        assert "Ada" in prompt.messages[0].content.text
        assert [p.name for p in await client.all_prompts()] == ["greet"]
        await client.ping()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_failing_tool_is_a_result_and_a_bad_call_is_a_server_error(live, transport: str) -> None:
    async with client_for(live, transport) as client:
        failed = await client.call_tool("fail")
        assert failed.is_error and SECRET not in failed.content[0].text
        with pytest.raises(ClientError) as unknown:
            await client.call_tool("no_such_tool")
        assert unknown.value.code is ClientErrorCode.SERVER_ERROR and unknown.value.rpc_code == -32602


@pytest.mark.parametrize("transport", STREAMING)
async def test_progress_reaches_the_callback(live, transport: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    async with client_for(live, transport) as client:
        result = await client.call_tool("slow", {"seconds": 0.05, "steps": 3},
                                        progress=lambda value, total, message: seen.append((value, total, message)))
    assert result.content[0].text == "slept 0.05"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.parametrize("transport", ["stdio", "http", "ws", "ws-chatgpt"])
@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
async def test_every_handshake_version_is_negotiated(live, transport: str, version: str) -> None:
    async with client_for(live, transport, protocol_version=version) as client:
        assert client.protocol_version == version
        assert (await client.call_tool("echo", {"text": version})).content[0].text == version


@pytest.mark.parametrize("transport", ["stdio", "http", "ws"])
async def test_log_notifications_reach_their_handler(live, transport: str) -> None:
    logged: list[str] = []
    async with client_for(live, transport) as client:
        client.on_notification("notifications/message", lambda method, params: logged.append(params["data"]))
        await client.request("logging/setLevel", {"level": "info"})
        await client.call_tool("chatty")
        await client.ping()  # streaming transports: anything sent before the answer has been handled by now
    assert logged == ["a info message", "a error message"]


@pytest.mark.parametrize("transport", ["stdio", "http", "ws"])
async def test_a_server_request_is_answered_by_the_registered_handler(live, transport: str) -> None:
    async with client_for(live, transport, capabilities={"elicitation": {}}) as client:
        client.on_request("elicitation/create", lambda params: {"action": "accept", "content": {"name": "Ada"}})
        result = await client.call_tool("ask_name")
    assert result.content[0].text == "Hello, Ada!"


@pytest.mark.parametrize("transport", ["stdio", "http", "ws"])
async def test_without_a_handler_a_server_request_is_refused_and_the_tool_goes_on(live, transport: str) -> None:
    async with client_for(live, transport, capabilities={"elicitation": {}}) as client:
        result = await client.call_tool("ask_name")
    assert result.is_error or result.content[0].text == "no name given"


@pytest.mark.parametrize("transport", ["http", "ws"])
async def test_list_changes_reach_their_handler(transport: str) -> None:
    """Over HTTP the change comes on the session's GET stream, outside any answer."""
    changed = asyncio.Event()
    with live_targets(Cancellations()) as fresh:
        async with client_for(fresh, transport) as client:
            client.on_notification("notifications/tools/list_changed", lambda method, params: changed.set())
            await client.call_tool("grow")
            await asyncio.wait_for(changed.wait(), 10)
            assert NEW_TOOL in {tool.name for tool in await client.all_tools()}


class CountingStdioWire(StdioWire):
    """The real stdio wire, counting the requests it could not write at once (its pipe was full)."""

    refused = 0

    def write_now(self, message: dict) -> bool:
        written = super().write_now(message)
        self.refused += not written
        return written


async def test_stdio_requests_bigger_than_the_pipe_wait_for_it_and_all_arrive_whole(live) -> None:
    """Requests written at once skip the send coroutine (ADR 0811); one that finds the pipe over its
    high-water mark is sent the waiting way instead, and nothing is lost, cut or reordered either way."""
    wire = CountingStdioWire(live.target("stdio").command)
    texts = [f"{index}:" + "x" * (256 * 1024) for index in range(8)]  # each 4x the pipe's 64 KiB buffer
    async with McpClient(live.target("stdio"), wire=wire, timeout=30) as client:
        results = await asyncio.gather(*(client.call_tool("echo", {"text": text}) for text in texts))
        assert [result.content[0].text for result in results] == texts
        assert wire.refused > 0  # the waiting path was taken, not only the direct one
        assert (await client.call_tool("echo", {"text": "after"})).content[0].text == "after"
