"""Upstream servers mounted as tools: a hexmcp serving another hexmcp's and the SDK server's tools.

The downstream is a live hexmcp HTTP server (in a thread) whose start-up runs each `Upstream`; the
upstreams are real processes (stdio) or a real SDK HTTP server that the test kills and restarts.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from typing import AsyncIterator, Iterator

import pytest

from bench.http import free_port, start, stop
from hexmcp.client import ClientError, ClientErrorCode, McpClient, Target
from hexmcp.tools.upstreams.mount import SEPARATOR, Upstream, parse_upstream
from hexmcp.core import McpServer, models, versions

from ..adapters.http_live import LiveServer, live_server
from ..fixtures.demo_server import GREETING, ITEMS
from .sdk_server import GREETING as SDK_GREETING
from .servers import DEMO_STDIO, SDK_SERVER

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]
SDK_STDIO = Target.stdio(f"{sys.executable} {SDK_SERVER}")


@contextlib.contextmanager
def mounting(*upstreams: tuple[str, Target]) -> Iterator[tuple[LiveServer, list[Upstream]]]:
    server = McpServer("hexmcp-gateway", "1.0.0")
    mounted = [Upstream(server, name, target, retry_initial_s=0.05, retry_max_s=0.5) for name, target in upstreams]
    with live_server(server, on_startup=[upstream.run for upstream in mounted]) as live:
        yield live, mounted


@contextlib.asynccontextmanager
async def downstream(live: LiveServer, *needed: str) -> AsyncIterator[McpClient]:
    """A client of the gateway, once the gateway lists every tool in `needed`."""
    async with McpClient(live.url) as client:
        for _ in range(200):
            if set(needed) <= {tool.name for tool in await client.all_tools()}:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError(f"the gateway never listed {needed}")
        yield client


async def until_available(upstream: Upstream) -> None:
    """Until the gateway has finished mounting (its tools are listed a moment before)."""
    for _ in range(1500):  # up to 30 s: a loaded CI machine mounts slowly
        if upstream.available:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{upstream.name} never became available")


async def test_a_hexmcp_and_the_sdk_server_served_as_our_own_tools() -> None:
    with mounting(("demo", Target.stdio(DEMO_STDIO)), ("sdk", SDK_STDIO)) as (live, _):
        async with downstream(live, "demo__echo", "sdk__add") as client:
            tools = {tool.name: tool for tool in await client.all_tools()}
            assert tools["demo__echo"].description == "Say the text back."
            assert tools["sdk__add"].input_schema["required"] == ["a", "b"]
            assert (await client.call_tool("demo__echo", {"text": "via the gateway"})).content[0].text == "via the gateway"
            assert (await client.call_tool("sdk__add", {"a": 40, "b": 2})).structured_content == {"sum": 42}
            progress: list[float] = []
            slow = await client.call_tool("demo__slow", {"seconds": 0.1, "steps": 3},
                                          progress=lambda value, total, message: progress.append(value))
            assert slow.content[0].text == "slept 0.1" and progress == [1, 2, 3]
            refused = await client.call_tool("demo__refuse", {"reason": "for the model"})
            assert refused.is_error and "for the model" in refused.content[0].text
            # Checked against the upstream's schema, here; at 2025-11-25 a tool execution error (SEP-1303).
            assert client.protocol_version == versions.V2025_11_25
            invalid = await client.call_tool("sdk__add", {"a": "forty"})
            assert invalid.is_error and invalid.content[0].text.startswith("Invalid arguments for tool 'sdk__add': ")
            # resources under upstream://NAME/<their URI>, prompts under the prefix
            assert {"upstream://demo/demo://greeting", "upstream://sdk/sdk://greeting"} <= {
                r.uri for r in await client.all_resources()}
            greeting = (await client.read_resource("upstream://demo/demo://greeting")).contents[0]
            assert greeting.text == GREETING and greeting.uri == "upstream://demo/demo://greeting"
            assert (await client.read_resource("upstream://sdk/sdk://greeting")).contents[0].text == SDK_GREETING
            assert {"demo__greet", "sdk__greet"} <= {p.name for p in await client.all_prompts()}
            greeting = await client.get_prompt("demo__greet", {"name": "Ada", "style": "poem"})
            assert greeting.messages[0].content.text == "Write a poem greeting for Ada."
            assert "Ada" in (await client.get_prompt("sdk__greet", {"name": "Ada"})).messages[0].content.text
            # resource templates under the same prefix, read upstream with the upstream's own URI
            templates = {t.uri_template for t in await client.all_resource_templates()}
            assert {"upstream://demo/demo://items/{item_id}", "upstream://sdk/sdk://items/{name}"} <= templates
            assert (await client.read_resource("upstream://demo/demo://items/apple")).contents[0].text == ITEMS["apple"]
            assert (await client.read_resource("upstream://sdk/sdk://items/pear")).contents[0].text == "the SDK's pear"
            # argument completion is asked of the upstream, for prompts and templates alike
            styles = await client.complete({"type": "ref/prompt", "name": "demo__greet"}, "style", "po")
            assert styles.completion.values == ["poem"]
            items = await client.complete({"type": "ref/resource", "uri": "upstream://demo/demo://items/{item_id}"},
                                          "item_id", "b")
            assert items.completion.values == ["banana"]
            with pytest.raises(ClientError) as failing:  # the upstream's reader fails: an error here too
                await client.read_resource("upstream://demo/demo://items/durian")
            assert failing.value.code is ClientErrorCode.SERVER_ERROR


async def test_upstream_list_changes_reach_downstream_clients() -> None:
    ws_demo = f"{sys.executable} -c \"import sys; sys.path.insert(0, '.'); " \
              "from tests.fixtures.ws_live import ws_demo_server; import asyncio; " \
              "from hexmcp.adapters.stdio import claim_stdout, serve_stdio; " \
              "fd = claim_stdout(); asyncio.run(serve_stdio(ws_demo_server(), wire_fd=fd))\""
    with mounting(("up", Target.stdio(ws_demo))) as (live, _):
        async with downstream(live, "up__grow") as client:
            changed = asyncio.Event()
            client.on_notification("notifications/tools/list_changed", lambda method, params: changed.set())
            await client.call_tool("up__grow")
            await asyncio.wait_for(changed.wait(), 10)
            for _ in range(100):
                if "up__grown" in {tool.name for tool in await client.all_tools()}:
                    break
                await asyncio.sleep(0.05)
            assert (await client.call_tool("up__grown")).content[0].text == "new"


async def test_a_killed_stdio_upstream_is_respawned_and_no_call_is_lost() -> None:
    with mounting(("demo", Target.stdio(DEMO_STDIO))) as (live, [upstream]):
        async with downstream(live, "demo__echo") as client:
            for round_ in range(3):
                await until_available(upstream)
                serving = upstream.client
                first = serving.wire.pid  # the process serving now
                assert (await client.call_tool("demo__echo", {"text": f"before {round_}"})).content[0].text == f"before {round_}"
                os.kill(first, signal.SIGKILL)  # the process belongs to the server's loop: no await on it here
                while not serving.lost.is_set():  # until the gateway has seen it go (else the call is in flight)
                    await asyncio.sleep(0.01)
                # issued while the upstream is gone or respawning: waits for it, then answers
                after = await client.call_tool("demo__echo", {"text": f"after {round_}"})
                assert not after.is_error and after.content[0].text == f"after {round_}"
                assert upstream.client.wire.pid != first


async def test_an_http_upstream_killed_and_restarted_mid_traffic_loses_no_call() -> None:
    port = free_port()
    command = [sys.executable, str(SDK_SERVER), "--port", str(port)]
    process = start(command, port)
    try:
        with mounting(("sdk", Target.parse(f"http://127.0.0.1:{port}/mcp"))) as (live, [upstream]):
            # The restarted SDK server takes seconds to import on a loaded machine (CI): calls must wait
            # that long for it, not the default 5 s, for "loses no call" to be what is tested.
            upstream.wait_s = 60.0
            async with downstream(live, "sdk__echo") as client:
                answers = [await client.call_tool("sdk__echo", {"text": f"call {i}"}) for i in range(5)]
                stop(process)

                async def restart() -> None:
                    await asyncio.sleep(0.5)
                    nonlocal process
                    process = await asyncio.to_thread(start, command, port)

                restarting = asyncio.ensure_future(restart())
                # sent while nothing listens: each waits for the reconnection instead of failing
                answers += [await client.call_tool("sdk__echo", {"text": f"call {i}"}) for i in range(5, 10)]
                await restarting
    finally:
        stop(process)
    assert [a.content[0].text for a in answers] == [f"call {i}" for i in range(10)]
    assert not any(a.is_error for a in answers)


async def test_an_upstream_that_stays_away_is_a_clear_tool_error() -> None:
    with mounting(("demo", Target.stdio(DEMO_STDIO))) as (live, [upstream]):
        async with downstream(live, "demo__echo") as client:
            await until_available(upstream)
            upstream.wait_s = 0.3
            upstream.target = Target.stdio("/nonexistent/server")  # every reconnection now fails
            os.kill(upstream.client.wire.pid, signal.SIGKILL)
            gone = await client.call_tool("demo__echo", {"text": "anyone?"})
            assert gone.is_error and "upstream server 'demo' is unavailable" in gone.content[0].text


@pytest.mark.parametrize("spec", ["noequals", "=http://x/mcp", "a__b=http://x/mcp", "bad name=http://x/mcp",
                                  "ok=ftp://x"])
def test_bad_upstream_specs_are_usage_errors(spec: str) -> None:
    with pytest.raises(ClientError) as bad:
        parse_upstream(spec)
    assert bad.value.code is ClientErrorCode.USAGE


def test_upstream_names_use_the_separator() -> None:
    name, target = parse_upstream("kb-2=stdio:hexmcp stdio")
    assert (name, target.command) == ("kb-2", ("hexmcp", "stdio")) and SEPARATOR == "__"


async def test_hexmcp_stdio_with_upstream_flags() -> None:
    """The composition root: `hexmcp stdio --upstream NAME=TARGET` (repeatable) serves the upstreams' tools."""
    gateway = Target.stdio(f"{sys.executable} -m hexmcp.app.cli stdio --no-classifier --no-knowledge "
                           f"--upstream 'demo=stdio:{DEMO_STDIO}' --upstream 'sdk=stdio:{sys.executable} {SDK_SERVER}'")
    async with McpClient(gateway) as client:
        for _ in range(200):
            if {"demo__add", "sdk__echo"} <= {tool.name for tool in await client.all_tools()}:
                break
            await asyncio.sleep(0.05)
        assert (await client.call_tool("demo__add", {"a": 1, "b": 2})).structured_content == {"sum": 3}
        assert (await client.call_tool("sdk__echo", {"text": "through"})).content[0].text == "through"


def test_a_bad_upstream_flag_is_exit_2() -> None:
    import subprocess

    ran = subprocess.run([sys.executable, "-m", "hexmcp.app.cli", "stdio", "--upstream", "a__b=http://x/mcp"],
                         capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert ran.returncode == 2 and "--upstream" in ran.stderr


async def test_a_hexmcp_mounted_over_http_and_over_websocket(live) -> None:
    """The module's live demo server (HTTP and WebSocket) as upstreams of a gateway."""
    with mounting(("web", Target.parse(live.http_url)), ("sock", Target.parse(live.ws_url))) as (gateway, _):
        async with downstream(gateway, "web__add", "sock__add") as client:
            assert (await client.call_tool("web__add", {"a": 1, "b": 1})).structured_content == {"sum": 2}
            assert (await client.call_tool("sock__echo", {"text": "over ws"})).content[0].text == "over ws"
            progress: list[float] = []
            await client.call_tool("web__slow", {"seconds": 0.05, "steps": 2},
                                   progress=lambda value, total, message: progress.append(value))
            assert progress == [1, 2]


async def test_the_official_sdk_client_calls_mounted_tools() -> None:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with mounting(("demo", Target.stdio(DEMO_STDIO))) as (live, [upstream]):
        await until_available(upstream)
        async with streamable_http_client(live.url) as (read, write, *_), ClientSession(read, write) as session:
            await session.initialize()
            assert "demo__echo" in {tool.name for tool in (await session.list_tools()).tools}
            echoed = await session.call_tool("demo__echo", {"text": "from the SDK"})
            assert echoed.content[0].text == "from the SDK"


def shrinking_server() -> McpServer:
    """An upstream whose `forget` tool drops its prompt and its resource template, as a live server may."""
    server = McpServer("shrinking", "1.0.0")

    @server.prompt(description="Here until forgotten")
    async def transient() -> str:
        return "still here"

    async def read_note(key: str) -> str:
        return f"note {key}"

    server.resources.add_template(models.ResourceTemplate(uri_template="notes://{key}", name="note"), read_note)

    @server.tool()
    async def forget() -> str:
        """Drop the prompt and the template."""
        server.prompts.remove("transient")
        server.resources.remove_template("notes://{key}")
        return "forgotten"

    return server


async def test_a_prompt_and_a_template_the_upstream_drops_are_dropped_downstream() -> None:
    with live_server(shrinking_server()) as upstream, mounting(("up", Target.parse(upstream.url))) as (live, [up]):
        async with downstream(live, "up__forget") as client:
            await until_available(up)  # tools are listed a moment before prompts and templates are mounted
            assert "up__transient" in {prompt.name for prompt in await client.all_prompts()}
            assert (await client.read_resource("upstream://up/notes://a")).contents[0].text == "note a"
            changed = asyncio.Event()
            client.on_notification("notifications/prompts/list_changed", lambda method, params: changed.set())
            await client.call_tool("up__forget")
            await asyncio.wait_for(changed.wait(), 10)
            for _ in range(100):
                if not await client.all_prompts() and not await client.all_resource_templates():
                    break
                await asyncio.sleep(0.05)
            assert await client.all_prompts() == [] and await client.all_resource_templates() == []
            with pytest.raises(ClientError) as gone:
                await client.get_prompt("up__transient")
            assert gone.value.rpc_code == -32602
            with pytest.raises(ClientError):
                await client.read_resource("upstream://up/notes://a")


def refusing_server() -> McpServer:
    """An upstream that refuses a call's arguments with -32602 and no path, as servers of the versions before
    2025-11-25 (and many others) do."""
    from hexmcp.core import ErrorCode, ProtocolError

    server = McpServer("refusing", "1.0.0")

    @server.tool()
    async def halve(number: int) -> str:
        """Half of an even number."""
        if number % 2:
            raise ProtocolError(ErrorCode.INVALID_PARAMS, f"{number} is odd: give an even number",
                                {"odd": number})
        return str(number // 2)

    return server


async def test_an_upstreams_refused_arguments_reach_the_client_in_its_versions_form() -> None:
    """From 2025-11-25 on a refused argument is an isError result the model reads and corrects (SEP-1303),
    whatever the upstream answered; an older client still gets -32602, naming the upstream."""
    with live_server(refusing_server()) as upstream, mounting(("up", Target.parse(upstream.url))) as (live, _):
        async with downstream(live, "up__halve") as client:
            assert (await client.call_tool("up__halve", {"number": 8})).content[0].text == "4"
            refused = await client.call_tool("up__halve", {"number": 7})
        assert refused.is_error and "up: 7 is odd: give an even number" in refused.content[0].text
        assert refused.meta["io.hexmcp/errorCode"] == "invalid_params"
        data = refused.meta["io.hexmcp/errorData"]
        upstream_event = data["upstreamData"].pop("eventId")  # the upstream's log names the same refusal
        assert upstream_event.startswith("ev-") and upstream_event != refused.meta["io.hexmcp/eventId"]
        assert data == {"path": "$.arguments", "upstream": "up", "upstreamData": {"odd": 7}}
        async with McpClient(live.url, protocol_version=versions.V2025_06_18) as old:
            with pytest.raises(ClientError) as error:
                await old.call_tool("up__halve", {"number": 7})
        assert error.value.rpc_code == -32602 and "up: 7 is odd" in error.value.message
