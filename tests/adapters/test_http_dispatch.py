"""`dispatch.run`: one JSON-RPC request through a core session under the adapter's deadline, as a plain
function returning the awaitable; `run_in_own_task` for work handed to a task of its own (a batch item)."""

from __future__ import annotations

import asyncio

import pytest

from hexmcp.adapters.http import dispatch
from hexmcp.core import ErrorCode, McpServer, NullPeer, Ok, Rejection, versions
from hexmcp.core.log import _REQUEST_IDS
from hexmcp.wire import jsonrpc
from hexmcp.wire.deadlines import Deadlines

pytestmark = pytest.mark.anyio


def _server() -> McpServer:
    server = McpServer("dispatch", "1")

    @server.tool()
    async def ids() -> str:
        """The log ids bound where the tool runs."""
        await asyncio.sleep(0)  # the other batch item runs meanwhile
        bound = _REQUEST_IDS.get()
        return "/".join(bound) if bound else "none"

    @server.tool()
    async def slow() -> str:
        """Outlives any short deadline."""
        await asyncio.sleep(5)
        return "late"

    return server


def _call(request_id: int, tool: str) -> jsonrpc.Request:
    return jsonrpc.Request(request_id, "tools/call", {"name": tool, "arguments": {}})


async def test_batch_items_in_their_own_tasks_each_log_under_their_own_trace() -> None:
    session = _server().open_session(session_id="s", peer=NullPeer(), assume_version=versions.LATEST_HANDSHAKE_VERSION)
    outcomes = await asyncio.gather(*(dispatch.run_in_own_task(session, _call(n, "ids"), Deadlines(10))
                                      for n in (1, 2)))
    texts = [outcome.result["content"][0]["text"] for outcome in outcomes if isinstance(outcome, Ok)]
    assert len(texts) == 2 and texts[0] != texts[1], texts
    assert all(text.startswith("s/h-") for text in texts), texts


async def test_past_the_deadline_the_outcome_is_a_timeout_refusal() -> None:
    session = _server().open_session(session_id="s", peer=NullPeer(), assume_version=versions.LATEST_HANDSHAKE_VERSION)
    outcome = await dispatch.run(session, _call(1, "slow"), Deadlines(0.05))
    assert isinstance(outcome, Rejection) and outcome.code is ErrorCode.REQUEST_TIMEOUT
    assert "tools/call" in outcome.message and outcome.event_id
