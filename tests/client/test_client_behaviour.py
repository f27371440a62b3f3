"""Timeouts and cancellation, retries, SSE resumption, auth and failure codes, against real servers."""

from __future__ import annotations

import asyncio
import sys

import pytest

from hexmcp.client import ClientError, ClientErrorCode, McpClient, RetryPolicy, SyncClient, Target
from hexmcp.client.transports.http import HttpWire

from ..support.net import free_port
from .servers import DEMO_STDIO, Cancellations, live_targets
from .wires import Cutting, Refusing

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]
TOKEN = "client-test-token"


@pytest.mark.parametrize("transport", ["http", "http-stateless", "ws", "ws-chatgpt"])
async def test_a_timed_out_call_is_cancelled_on_the_server(live, cancellations: Cancellations, transport: str) -> None:
    cancellations.cancelled.clear()
    version = {"protocol_version": "2026-07-28"} if transport == "http-stateless" else {}
    async with McpClient(live.target(transport), **version) as client:
        with pytest.raises(ClientError) as timed_out:
            await client.call_tool("hang", timeout=0.3)
        assert timed_out.value.code is ClientErrorCode.TIMEOUT
        assert await asyncio.to_thread(cancellations.cancelled.wait, 10), "the server never saw the cancellation"
        assert (await client.call_tool("echo", {"text": "still here"})).content[0].text == "still here"


async def test_a_timed_out_call_leaves_a_stdio_session_usable() -> None:
    async with McpClient(Target.stdio(DEMO_STDIO)) as client:
        with pytest.raises(ClientError) as timed_out:
            await client.call_tool("slow", {"seconds": 30}, timeout=0.2)
        assert timed_out.value.code is ClientErrorCode.TIMEOUT
        assert (await client.call_tool("echo", {"text": "next"})).content[0].text == "next"


async def test_reads_are_retried_and_tool_calls_are_not(live) -> None:
    refusing = Refusing({"tools/list": 2, "tools/call": 1})
    wire = HttpWire(live.http_url, middlewares=[refusing])
    async with McpClient(live.http_url, wire=wire, retry=RetryPolicy(attempts=3, initial_s=0.01)) as client:
        assert (await client.list_tools()).tools
        assert refusing.attempts["tools/list"] == 3
        with pytest.raises(ClientError) as refused:
            await client.call_tool("echo", {"text": "once"})
        assert refused.value.code is ClientErrorCode.UNREACHABLE
        assert refusing.attempts["tools/call"] == 1


async def test_retries_stop_after_the_policy_s_attempts(live) -> None:
    refusing = Refusing({"resources/read": 10})
    wire = HttpWire(live.http_url, middlewares=[refusing])
    async with McpClient(live.http_url, wire=wire, retry=RetryPolicy(attempts=4, initial_s=0.01)) as client:
        with pytest.raises(ClientError) as refused:
            await client.read_resource("demo://greeting")
        assert refused.value.code is ClientErrorCode.UNREACHABLE
        assert refusing.attempts["resources/read"] == 4


async def test_a_broken_sse_answer_is_resumed_with_last_event_id(live) -> None:
    cutting = Cutting("tools/call")
    progress: list[float] = []
    async with McpClient(live.http_url, wire=HttpWire(live.http_url, middlewares=[cutting])) as client:
        result = await client.call_tool("slow", {"seconds": 0.3, "steps": 3},
                                        progress=lambda value, total, message: progress.append(value))
    assert cutting.cut and len(cutting.resumed_from) == 1
    assert result.content[0].text == "slept 0.3"
    assert progress == [1, 2, 3]  # nothing lost, nothing twice


@pytest.fixture(scope="module")
def guarded():
    with live_targets(Cancellations(), auth_token=TOKEN) as targets:
        yield targets


@pytest.mark.parametrize("transport", ["http", "rest", "ws", "ws-chatgpt"])
async def test_bearer_auth(guarded, transport: str) -> None:
    with pytest.raises(ClientError) as refused:
        async with McpClient(guarded.target(transport)):
            pass
    assert refused.value.code is ClientErrorCode.UNAUTHORIZED
    with pytest.raises(ClientError) as wrong:
        async with McpClient(guarded.target(transport), auth_token="wrong"):
            pass
    assert wrong.value.code is ClientErrorCode.UNAUTHORIZED
    async with McpClient(guarded.target(transport), auth_token=TOKEN) as client:
        assert (await client.call_tool("echo", {"text": "in"})).content[0].text == "in"


@pytest.mark.parametrize("url", ["http://127.0.0.1:{port}/mcp", "ws://127.0.0.1:{port}/ws", "rest+http://127.0.0.1:{port}/mcp"])
async def test_nothing_listening_is_unreachable(url: str) -> None:
    with pytest.raises(ClientError) as unreachable:
        async with McpClient(url.format(port=free_port()), retry=RetryPolicy(attempts=1)):
            pass
    assert unreachable.value.code is ClientErrorCode.UNREACHABLE


async def test_a_server_process_that_dies_is_unreachable_and_says_why() -> None:
    command = f"{sys.executable} -c \"import sys; print('no model here', file=sys.stderr); sys.exit(3)\""
    with pytest.raises(ClientError) as died:
        async with McpClient(Target.stdio(command)):
            pass
    assert died.value.code is ClientErrorCode.UNREACHABLE
    assert "code 3" in died.value.message and "no model here" in died.value.message


async def test_a_command_that_does_not_exist_is_unreachable() -> None:
    with pytest.raises(ClientError) as missing:
        async with McpClient(Target.stdio("/nonexistent/hexmcp-server")):
            pass
    assert missing.value.code is ClientErrorCode.UNREACHABLE


async def test_an_unknown_version_is_a_usage_error() -> None:
    with pytest.raises(ClientError) as unknown:
        McpClient(Target.stdio(DEMO_STDIO), protocol_version="1999-01-01")
    assert unknown.value.code is ClientErrorCode.USAGE


def test_the_sync_client(live) -> None:
    with SyncClient(live.http_url) as client:
        assert client.protocol_version is not None
        assert "echo" in {tool.name for tool in client.all_tools()}
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"sum": 3}
        assert client.read_resource("demo://greeting").contents


async def test_a_stdio_server_that_prints_a_banner_still_works() -> None:
    noisy = f"sh -c 'echo starting up...; exec {DEMO_STDIO}'"
    async with McpClient(Target.stdio(noisy)) as client:
        assert (await client.call_tool("echo", {"text": "after the banner"})).content[0].text == "after the banner"
        assert any("starting up..." in line for line in client.wire.stderr_tail)
