"""How many `notifications/*/list_changed` a connected client gets from a gateway mounting a real upstream:
one per kind per change it can see (core/list_changes.py). Before, mounting the upstream below told each
client once per tool registered, and a reconnection that re-registered the same tools told them again.

The gateway is a live hexmcp HTTP server (in a thread); the upstream a real hexmcp process over stdio that
the test kills. The clients: the official MCP SDK's (session GET stream) and hexmcp's own.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import signal
import sys
import threading
from typing import Any, AsyncIterator, Iterator

import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from hexmcp.client import McpClient, Target
from hexmcp.core import McpServer
from hexmcp.tools.upstreams.mount import Upstream

from ..adapters.http_live import LiveServer, live_server

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]
KINDS = ("tools", "prompts", "resources")
# The WebSocket tests' demo server over stdio: the demo's tools, prompt, resource and template, plus `grow`,
# a tool that registers one more tool (and so sends its own tools/list_changed upstream).
GROWING_UPSTREAM = f"{sys.executable} -c \"import sys; sys.path.insert(0, '.'); " \
                   "from tests.fixtures.ws_live import ws_demo_server; import asyncio; " \
                   "from hexmcp.adapters.stdio import claim_stdout, serve_stdio; " \
                   "fd = claim_stdout(); asyncio.run(serve_stdio(ws_demo_server(), wire_fd=fd))\""
SETTLE_S = 0.5  # notifications travel on the GET stream, unordered with answers: time for a late one to land


@contextlib.contextmanager
def gated_gateway() -> Iterator[tuple[LiveServer, Upstream, threading.Event]]:
    """A gateway whose upstream is mounted only once the test sets the event: its clients connect first."""
    server = McpServer("hexmcp-gateway", "1.0.0")
    upstream = Upstream(server, "up", Target.stdio(GROWING_UPSTREAM), retry_initial_s=0.05, retry_max_s=0.5)
    gate = threading.Event()

    async def mount_when_let() -> None:
        await asyncio.to_thread(gate.wait)
        await upstream.run()

    try:
        with live_server(server, on_startup=[mount_when_let]) as live:
            yield live, upstream, gate
    finally:
        gate.set()  # a test that failed before letting it: the waiting thread ends


@contextlib.asynccontextmanager
async def sdk_client(live: LiveServer) -> AsyncIterator[tuple[ClientSession, collections.Counter[str]]]:
    """The official SDK's client on the gateway, counting the list_changed notifications it is given."""
    heard: collections.Counter[str] = collections.Counter()

    async def on_message(message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str) and method.endswith("/list_changed"):
            heard[method.split("/")[1]] += 1

    async with streamable_http_client(live.url) as (read, write, *_):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            yield session, heard


def hexmcp_counter(client: McpClient) -> collections.Counter[str]:
    heard: collections.Counter[str] = collections.Counter()
    for kind in KINDS:
        client.on_notification(f"notifications/{kind}/list_changed",
                               lambda method, params: heard.update([method.split("/")[1]]))
    return heard


async def until(condition: Any, what: str) -> None:
    for _ in range(1500):  # up to 30 s: a loaded machine mounts slowly
        if await condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"never: {what}")


async def settled(*counters: collections.Counter[str]) -> list[dict[str, int]]:
    await asyncio.sleep(SETTLE_S)
    return [{kind: counter[kind] for kind in KINDS} for counter in counters]


async def test_mount_relist_and_reconnection_each_tell_a_client_once_per_changed_kind() -> None:
    with gated_gateway() as (live, upstream, gate):
        async with sdk_client(live) as (sdk, sdk_heard), McpClient(live.url) as ours:
            ours_heard = hexmcp_counter(ours)
            await ours.all_tools()  # its session is open (and its GET stream listening) before the mount
            assert not (await sdk.list_tools()).tools

            gate.set()  # the mount: eleven tools, a prompt, a resource and a template
            await until(lambda: _true(upstream.available), "the upstream was mounted")
            mounted = await settled(sdk_heard, ours_heard)
            assert mounted == [{"tools": 1, "prompts": 1, "resources": 1}] * 2, mounted
            assert len((await sdk.list_tools()).tools) == len(upstream.mounted) > 1

            # The upstream process dies and is respawned: the same lists, so no client is told anything.
            first = upstream.client
            os.kill(first.wire.pid, signal.SIGKILL)
            await until(lambda: _true(upstream.available and upstream.client is not first), "the upstream came back")
            assert await settled(sdk_heard, ours_heard) == mounted, "a reconnection with the same lists re-listed"

            # The upstream adds a tool and says so: one tools/list_changed, nothing for the other kinds.
            await ours.call_tool("up__grow")
            await until(lambda: _listed(sdk, "up__grown"), "the grown tool was listed")
            grown = await settled(sdk_heard, ours_heard)
            assert grown == [{"tools": 2, "prompts": 1, "resources": 1}] * 2, grown

            # Respawned again, the upstream has lost the grown tool: that is one change clients can see.
            first = upstream.client
            os.kill(first.wire.pid, signal.SIGKILL)
            await until(lambda: _true(upstream.available and upstream.client is not first), "the upstream came back")
            await until(lambda: _not_listed(sdk, "up__grown"), "the grown tool was dropped")
            dropped = await settled(sdk_heard, ours_heard)
            assert dropped == [{"tools": 3, "prompts": 1, "resources": 1}] * 2, dropped


async def _true(value: bool) -> bool:
    return value


async def _listed(session: ClientSession, name: str) -> bool:
    return name in {tool.name for tool in (await session.list_tools()).tools}


async def _not_listed(session: ClientSession, name: str) -> bool:
    return not await _listed(session, name)
