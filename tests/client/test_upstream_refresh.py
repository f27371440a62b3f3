"""A flood of `list_changed` from an upstream coalesces: one re-list per kind in flight, at most one more
owed (`tools/upstreams/refresh.py`). Before, each notification started a re-list of every kind, and a
flood held the server's memory up (bench/diaries/hostile_probes.md)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.client.mcp_client import McpClient
from hexmcp.client.target import Target
from hexmcp.core import McpServer
from hexmcp.tools.upstreams.mount import Upstream
from hexmcp.tools.upstreams.refresh import CoalescingRefresh

from ..adapters.http_live import LiveServer, live_server

pytestmark = pytest.mark.timeout(90)


@given(steps=st.lists(st.one_of(st.integers(1, 20), st.just(0)), max_size=40))
def test_refreshes_coalesce_and_none_is_lost(steps: list[int]) -> None:
    """Each step: n > 0 notifications arrive at once, or (0) the refresh in flight finishes. Invariants:
    never two runs at once; every notification is followed by a run that started after it; a burst costs
    at most two runs whatever its size."""

    async def scenario() -> None:
        gate: asyncio.Queue[None] = asyncio.Queue()
        active = 0
        started_at: list[int] = []  # the clock (notifications so far) when each run started
        clock = 0

        async def work() -> None:
            nonlocal active
            active += 1
            assert active == 1, "two refreshes at once"
            started_at.append(clock)
            await gate.get()
            active -= 1

        refresh = CoalescingRefresh(work)
        bursts = 0
        for step in steps:
            if step:
                bursts += 1
                for _ in range(step):
                    clock += 1
                    refresh.request()
            elif refresh.running:
                gate.put_nowait(None)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        while refresh.running:  # finish what is owed
            gate.put_nowait(None)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        # However many notifications a burst holds, it costs at most two runs: the one it starts, one owed.
        assert refresh.runs == len(started_at) <= min(clock, 2 * bursts)
        if clock:
            assert started_at[-1] == clock, "the last notification was never answered by a refresh"

    asyncio.run(scenario())


FLOOD = 5_000
SCRIPT = '''
import json, sys
lists = sys.argv[1]
def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()
for line in sys.stdin:
    message = json.loads(line)
    ident, method = message.get("id"), message.get("method")
    if ident is None:
        continue
    result = {}
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "serverInfo": {"name": "flood", "version": "1"},
                  "capabilities": {"tools": {"listChanged": True}, "prompts": {}}}
    elif method in ("tools/list", "prompts/list"):
        with open(lists, "a") as log:
            log.write(method + "\\n")
        result = {"tools": [{"name": "flood", "inputSchema": {"type": "object"}}]} if method == "tools/list" \\
            else {"prompts": []}
    elif method == "tools/call":  # the flood, then the answer
        sys.stdout.write((json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}) + "\\n") * %d)
        result = {"content": [{"type": "text", "text": "flooded"}]}
    send({"jsonrpc": "2.0", "id": ident, "result": result})
''' % FLOOD


@contextlib.contextmanager
def flooding_upstream(tmp_path) -> Iterator[tuple[LiveServer, Upstream, object]]:
    script, lists = tmp_path / "flood.py", tmp_path / "lists.log"
    script.write_text(SCRIPT, encoding="utf-8")
    lists.write_text("", encoding="utf-8")
    upstream = Upstream(McpServer("hexmcp", "1.0.0"), "up", Target.stdio(f"{sys.executable} {script} {lists}"),
                        retry_initial_s=0.05, retry_max_s=0.5)
    with live_server(upstream.server, on_startup=[upstream.run]) as live:
        yield live, upstream, lists


@pytest.mark.anyio
async def test_a_list_changed_flood_is_a_handful_of_re_lists_of_that_kind_only(tmp_path) -> None:
    with flooding_upstream(tmp_path) as (live, upstream, lists):
        for _ in range(1500):
            if upstream.available:
                break
            await asyncio.sleep(0.02)
        assert upstream.available, upstream.last_error
        async with McpClient(live.url, timeout=60) as client:
            for _ in range(2):
                result = await client.call_tool("up__flood")
                assert result.content[0].text == "flooded"
        for _ in range(200):  # the owed re-list runs once the flood has been read
            if not upstream.refreshes["tools"].running:
                break
            await asyncio.sleep(0.05)
        logged = lists.read_text().split()
        # At the mount: one tools/list and one prompts/list. Per flood: one re-list of tools started, at
        # most one owed; never prompts (only tools changed). Before: one re-list of every kind per notification.
        assert logged.count("prompts/list") == 1, logged.count("prompts/list")
        assert 1 < logged.count("tools/list") <= 1 + 2 * 2, logged.count("tools/list")
        assert upstream.refreshes["tools"].runs <= 4

