"""The `TaskStore` contract, held by the in-process store and by the Redis store against a real Redis
server; and two servers sharing one Redis, as stateless replicas do: a task started on one is read and
cancelled through the other."""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator, Iterator

import pytest

from hexmcp.adapters.task_store_redis import RedisTaskStore
from hexmcp.core import TASKS_EXTENSION, McpServer, TaskLimits, ToolContext
from hexmcp.core.tasks.memory_store import MemoryTaskStore
from hexmcp.core.tasks.model import SignalKind, TaskRecord, TaskSignal, TaskStatus
from tests.support.peer import CoreClient, stateless_meta
from tests.support.redis_server import running_redis

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

LIMITS = TaskLimits(ttl_ms=1_000, poll_interval_ms=50, max_active_per_client=2)
WITH_TASKS = {"extensions": {TASKS_EXTENSION: {}}, "elicitation": {}}
ELICIT_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
META = {"_meta": stateless_meta(capabilities=WITH_TASKS)}


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with running_redis() as url:
        yield url


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    if request.param == "memory":
        made: Any = MemoryTaskStore()
    else:
        made = RedisTaskStore(request.getfixturevalue("redis_url"), prefix=f"t{time.monotonic_ns()}:")
    yield made
    await made.close()


def record(task_id: str, owner: str = "alice") -> TaskRecord:
    return TaskRecord.new(task_id=task_id, owner=owner, now=time.time(), limits=LIMITS)


async def test_a_created_record_reads_back_and_unknown_ones_are_none(store: Any) -> None:
    created = record("a")
    assert await store.create(created, max_active=2)
    assert await store.get("a") == created
    assert await store.get("missing") is None


async def test_the_bound_counts_unfinished_tasks_only(store: Any) -> None:
    first, second = record("1"), record("2")
    assert await store.create(first, max_active=2) and await store.create(second, max_active=2)
    assert not await store.create(record("3"), max_active=2)
    assert await store.create(record("x", owner="bob"), max_active=2), "the bound is per client"
    await store.save(first.moved(TaskStatus.COMPLETED, now=time.time(), result={"content": []}))
    assert await store.create(record("3"), max_active=2)


async def test_an_ended_record_expires_after_its_ttl(store: Any) -> None:
    created = record("e")
    await store.create(created, max_active=2)
    await store.save(created.moved(TaskStatus.CANCELLED, now=time.time()))
    assert (await store.get("e")).status is TaskStatus.CANCELLED
    await asyncio.sleep(LIMITS.ttl_ms / 1000 + 0.2)
    assert await store.get("e") is None


async def test_signals_arrive_in_order_and_a_wait_times_out(store: Any) -> None:
    await store.create(record("s"), max_active=2)
    await store.signal("s", TaskSignal(kind=SignalKind.ANSWERS, answers={"k": {"action": "accept"}}))
    await store.signal("s", TaskSignal(kind=SignalKind.CANCEL))
    assert (await store.next_signal("s", 1)).answers == {"k": {"action": "accept"}}
    assert (await store.next_signal("s", 1)).kind is SignalKind.CANCEL
    assert await store.next_signal("s", 0.2) is None


def replica(redis_url: str, prefix: str, steps: list[int]) -> McpServer:
    server = McpServer("replica", "0")
    server.use_task_store(RedisTaskStore(redis_url, prefix=prefix), LIMITS)

    async def count(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        while True:
            steps.append(1)
            await asyncio.sleep(0.01)

    async def ask(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answers = await ctx.ask({"a": ("elicitation", {"message": "a?", "requestedSchema": ELICIT_SCHEMA})})
        return f"answered {answers['a']['action']}"

    server.tools.add("count", count, description="counts until stopped",
                     input_schema={"type": "object", "properties": {}}, long_running=True)
    server.tools.add("ask", ask, description="asks one question",
                     input_schema={"type": "object", "properties": {}}, long_running=True)
    return server


def two_replicas(redis_url: str, steps: list[int]) -> tuple[CoreClient, CoreClient]:
    """Two servers sharing one Redis, each with a session of the same client."""
    prefix = f"r{time.monotonic_ns()}:"
    on_one = CoreClient(replica(redis_url, prefix, steps), session_id="one")
    on_two = CoreClient(replica(redis_url, prefix, []), session_id="two")
    on_one.session.client_id = on_two.session.client_id = "alice"
    return on_one, on_two


async def status_reached(client: CoreClient, task_id: str, status: str, what: str) -> dict[str, Any]:
    for _ in range(200):
        task = await client.ok("tasks/get", {"taskId": task_id, **META})
        if task["status"] == status:
            return task
        await asyncio.sleep(0.02)
    raise AssertionError(what)


async def test_replicas_sharing_redis_serve_each_others_tasks(redis_url: str) -> None:
    steps: list[int] = []
    on_one, on_two = two_replicas(redis_url, steps)
    created = await on_one.ok("tools/call", {"name": "count", "arguments": {}, **META})
    seen = await on_two.ok("tasks/get", {"taskId": created["taskId"], **META})
    assert seen["status"] == "working"
    await on_two.ok("tasks/cancel", {"taskId": created["taskId"], **META})
    await status_reached(on_two, created["taskId"], "cancelled",
                         "the cancel sent to one replica never stopped the work on the other")
    stopped_at = len(steps)
    await asyncio.sleep(0.2)
    assert len(steps) == stopped_at
    await on_one.session.server.shutdown()
    await on_two.session.server.shutdown()


async def test_answers_sent_to_another_replica_reach_the_task(redis_url: str) -> None:
    """`tasks/update` through the replica that does not run the task: the answers travel as a signal."""
    on_one, on_two = two_replicas(redis_url, [])
    created = await on_one.ok("tools/call", {"name": "ask", "arguments": {}, **META})
    await status_reached(on_two, created["taskId"], "input_required", "the task never asked its question")
    await on_two.ok("tasks/update", {"taskId": created["taskId"], "inputResponses": {"a": {"action": "decline"}},
                                     **META})
    task = await status_reached(on_two, created["taskId"], "completed",
                                "answers sent to one replica never reached the task on the other")
    assert task["result"]["content"][0]["text"] == "answered decline"
    await on_one.session.server.shutdown()
    await on_two.session.server.shutdown()
