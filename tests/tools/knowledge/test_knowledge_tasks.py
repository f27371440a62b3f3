"""Indexing a corpus as a task through every transport that carries 2026-07-28 (Streamable HTTP, stdio,
WebSocket) of the real `hexmcp` command, with hexmcp's own client (neither official SDK speaks the tasks
extension yet): polled to completion, cancelled mid-way with the work shown to stop, and picked up again
by a client that reconnects.

The work counter seen from outside is the vector cache: `fresh` drops each document's cached vectors and
every document embedded writes its file again, so once a task is cancelled the count must stop changing.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import pytest

from hexmcp.client.mcp_client import McpClient
from hexmcp.core import TASKS_EXTENSION, versions
from tests.support.docs_server import docs_env, serve_docs
from tests.support.knowledge_corpus import write_numbered_corpus

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(240)]

TASKS = {"extensions": {TASKS_EXTENSION: {}}}
TERMINAL = {"completed", "failed", "cancelled"}
DOCUMENTS = 30
SUBSET = "doc00"  # doc000 .. doc009: what the completion test re-indexes, to keep it short
PARAGRAPHS = 12


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Enough passages that a fresh index takes seconds, so a cancel lands mid-way."""
    return write_numbered_corpus(tmp_path_factory.mktemp("big-corpus"), DOCUMENTS, PARAGRAPHS)


@pytest.fixture(scope="module")
def http_base(big_corpus: Path, knowledge_cache: Path, embedder: Any) -> Any:
    with serve_docs(big_corpus, knowledge_cache, timeout=180) as base:
        yield base


def cached_vectors(cache: Path) -> int:
    return len(list((cache / "knowledge").glob("*.npz")))


@pytest.fixture(params=["http", "stdio", "ws"])
def target(request: pytest.FixtureRequest, big_corpus: Path, knowledge_cache: Path) -> str:
    if request.param == "stdio":
        env = docs_env(knowledge_cache)
        command = ["env", f"HEXMCP_CACHE_DIR={env['HEXMCP_CACHE_DIR']}", sys.executable, "-m", "hexmcp.app.cli",
                   "stdio", "--no-classifier", "--docs", str(big_corpus), "--log-level", "warning"]
        return "stdio:" + shlex.join(command)
    base = request.getfixturevalue("http_base")
    return base.replace("http://", "ws://") + "/ws" if request.param == "ws" else base + "/mcp"


async def connect(target: str) -> McpClient:
    client = McpClient(target, protocol_version=versions.V2026_07_28, capabilities=TASKS, timeout=120)
    await client.connect()
    return client


@pytest.fixture
async def client(target: str) -> AsyncIterator[McpClient]:
    client = await connect(target)
    try:
        yield client
    finally:
        await client.close()


async def poll(client: McpClient, task_id: str, done: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    for _ in range(2400):
        task = await client.request("tasks/get", {"taskId": task_id})
        seen.append(task)
        if done(task):
            return seen
        await asyncio.sleep(task["pollIntervalMs"] / 1000)
    raise AssertionError(f"task {task_id} never got there; last seen {seen[-1]}")


async def test_a_corpus_is_indexed_as_a_task_polled_to_completion(client: McpClient) -> None:
    created = await client.request("tools/call", {"name": "indexDocuments",
                                                  "arguments": {"path": SUBSET, "fresh": True}})
    assert created["resultType"] == "task" and created["status"] == "working"
    seen = await poll(client, created["taskId"], lambda task: task["status"] in TERMINAL)
    final = seen[-1]
    assert final["status"] == "completed", final
    summary = final["result"]["structuredContent"]
    assert summary["documents"] == 10 and summary["embedded"] == summary["passages"] == 10 * (PARAGRAPHS + 1)
    assert any("indexing passages" in task.get("statusMessage", "") for task in seen), "no progress was shown"


async def test_a_cancelled_index_task_stops_embedding(client: McpClient, knowledge_cache: Path) -> None:
    created = await client.request("tools/call", {"name": "indexDocuments", "arguments": {"fresh": True}})
    await poll(client, created["taskId"], lambda task: "indexing passages" in task.get("statusMessage", ""))
    ack = await client.request("tasks/cancel", {"taskId": created["taskId"]})
    assert ack["resultType"] == "complete" and "status" not in ack
    final = (await poll(client, created["taskId"], lambda task: task["status"] in TERMINAL))[-1]
    assert final["status"] == "cancelled", "the index finished before the cancel landed: make the corpus bigger"
    stopped_at = cached_vectors(knowledge_cache)
    await asyncio.sleep(1.5)
    assert cached_vectors(knowledge_cache) == stopped_at, "documents were still embedded after the cancel"
    # Put the cache back, so the next server started on this corpus does not embed it all at start-up.
    again = await client.request("tools/call", {"name": "indexDocuments", "arguments": {}})
    restored = (await poll(client, again["taskId"], lambda task: task["status"] in TERMINAL))[-1]
    assert 0 < restored["result"]["structuredContent"]["embedded"] < restored["result"]["structuredContent"]["passages"]


@pytest.mark.parametrize("transport", ["http", "ws"])
async def test_a_client_that_reconnects_gets_its_task_back(transport: str, http_base: str) -> None:
    target = http_base + "/mcp" if transport == "http" else http_base.replace("http://", "ws://") + "/ws"
    first = await connect(target)
    created = await first.request("tools/call", {"name": "indexDocuments", "arguments": {"path": "doc00"}})
    await first.close()
    second = await connect(target)
    try:
        final = (await poll(second, created["taskId"], lambda task: task["status"] in TERMINAL))[-1]
        assert final["status"] == "completed"
    finally:
        await second.close()
