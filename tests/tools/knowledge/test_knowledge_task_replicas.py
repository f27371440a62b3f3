"""Two `hexmcp serve --stateless --task-store redis://…` replicas sharing a real Redis, as behind a load
balancer: a task created through one is polled to its result through the other, and a new connection
with the same bearer token (the same client) gets it too. (Other clients get 'not found': tests/core.)"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest

from hexmcp.client.mcp_client import McpClient
from hexmcp.core import TASKS_EXTENSION, versions
from tests.support.docs_server import serve_docs
from tests.support.redis_server import running_redis

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(300)]

TASKS = {"extensions": {TASKS_EXTENSION: {}}}
TOKEN = "replica-test-token"


async def client_for(base: str, token: str) -> McpClient:
    client = McpClient(base + "/mcp", protocol_version=versions.V2026_07_28, capabilities=TASKS, auth_token=token)
    await client.connect()
    return client


async def test_a_task_created_on_one_replica_is_polled_on_the_other(corpus_dir: Path, tmp_path_factory: Any) -> None:
    cache = tmp_path_factory.mktemp("replica-cache")
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(running_redis())
        flags = ("--stateless", "--task-store", url, "--auth-token", TOKEN, "--task-poll-interval", "50")
        one = stack.enter_context(serve_docs(corpus_dir, cache, *flags, timeout=180))
        two = stack.enter_context(serve_docs(corpus_dir, cache, *flags, timeout=180))
        on_one, on_two = await client_for(one, TOKEN), await client_for(two, TOKEN)
        try:
            created = await on_one.request("tools/call", {"name": "indexDocuments",
                                                          "arguments": {"path": "guide/", "fresh": True}})
            assert created["resultType"] == "task" and created["pollIntervalMs"] == 50
            deadline = asyncio.get_running_loop().time() + 180  # a loaded machine embeds slowly
            while True:
                task = await on_two.request("tasks/get", {"taskId": created["taskId"]})
                if task["status"] != "working" or asyncio.get_running_loop().time() > deadline:
                    break
                await asyncio.sleep(0.05)
            assert task["status"] == "completed", task
            assert task["result"]["structuredContent"]["documents"] == 2
            again = await client_for(one, TOKEN)  # same token, new connection: the same client
            assert (await again.request("tasks/get", {"taskId": created["taskId"]}))["status"] == "completed"
            await again.close()
        finally:
            await on_one.close()
            await on_two.close()
