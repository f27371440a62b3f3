"""Redis task records are leased (issue 30): a replica that dies mid-task frees its owner's slots within one
lease, while a live one keeps its tasks as long as it runs them; no key is left without an expiry.

The replica is a real process running a real TaskRunner against the real Redis the tests start; it is
killed with SIGKILL, so nothing of it runs afterwards (no drain, no final save)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from typing import Iterator

import pytest
import redis

from hexmcp.adapters.task_store_redis import RedisTaskStore
from hexmcp.core import TaskLimits
from hexmcp.core.tasks.model import TaskRecord, TaskStatus
from tests.support.redis_server import running_redis

pytestmark = pytest.mark.timeout(60)
LEASE_MS = 600
LIMITS = TaskLimits(ttl_ms=60_000, poll_interval_ms=50, max_active_per_client=1)
REPLICA = textwrap.dedent("""
    import asyncio, sys
    from hexmcp.adapters.task_store_redis import RedisTaskStore
    from hexmcp.core import TaskLimits
    from hexmcp.core.tasks.runner import TaskRunner

    async def main(url, prefix, lease_ms):
        runner = TaskRunner(RedisTaskStore(url, prefix=prefix, lease_ms=lease_ms),
                            TaskLimits(ttl_ms=60_000, max_active_per_client=1))
        channel = await runner.open("alice")
        runner.run(channel, asyncio.Event().wait())  # work that never ends by itself
        print(channel.task_id, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
""")


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with running_redis() as url:
        yield url


def _record(task_id: str) -> TaskRecord:
    return TaskRecord.new(task_id=task_id, owner="alice", now=time.time(), limits=LIMITS)


def _keys_without_expiry(url: str, prefix: str) -> list[bytes]:
    client = redis.Redis.from_url(url)
    try:
        return [key for key in client.scan_iter(f"{prefix}*") if client.pttl(key) < 0]
    finally:
        client.close()


@pytest.mark.anyio
async def test_a_heartbeat_keeps_a_task_and_its_slot_and_silence_frees_them(redis_url: str) -> None:
    prefix = f"l{time.monotonic_ns()}:"
    store = RedisTaskStore(redis_url, prefix=prefix, lease_ms=LEASE_MS)
    try:
        assert await store.create(_record("a"), max_active=1)
        assert not await store.create(_record("b"), max_active=1)
        for _ in range(int(3 * LEASE_MS / 1000 / store.heartbeat_interval_s)):  # three leases' worth of beats
            await asyncio.sleep(store.heartbeat_interval_s)
            assert await store.heartbeat(_record("a"))
        assert not await store.create(_record("b"), max_active=1), "a renewed task lost its slot"
        assert (await store.get("a")).status is TaskStatus.WORKING
        assert _keys_without_expiry(redis_url, prefix) == []
        await asyncio.sleep(LEASE_MS / 1000 + 0.2)  # no heartbeat: the lease runs out
        assert await store.get("a") is None
        assert not await store.heartbeat(_record("a")), "a lapsed lease must not come back"
        assert await store.create(_record("b"), max_active=1)
    finally:
        await store.close()


@pytest.mark.anyio
async def test_an_ended_task_frees_its_slot_at_once_and_keeps_its_result_for_its_ttl(redis_url: str) -> None:
    prefix = f"e{time.monotonic_ns()}:"
    store = RedisTaskStore(redis_url, prefix=prefix, lease_ms=LEASE_MS)
    try:
        created = _record("a")
        assert await store.create(created, max_active=1)
        await store.save(created.moved(TaskStatus.COMPLETED, now=time.time(), result={"content": []}))
        assert not await store.heartbeat(created)  # an ended task holds no lease, and gets none back
        assert await store.create(_record("b"), max_active=1)
        await asyncio.sleep(LEASE_MS / 1000 + 0.2)
        assert (await store.get("a")).status is TaskStatus.COMPLETED  # kept by its ttl, not its lease
        assert _keys_without_expiry(redis_url, prefix) == []
    finally:
        await store.close()


def test_a_killed_replicas_task_frees_its_owners_slot_within_one_lease(redis_url: str) -> None:
    prefix = f"k{time.monotonic_ns()}:"
    replica = subprocess.Popen([sys.executable, "-c", REPLICA, redis_url, prefix, str(LEASE_MS)],
                               stdout=subprocess.PIPE, text=True)

    async def create_b() -> bool:
        store = RedisTaskStore(redis_url, prefix=prefix, lease_ms=LEASE_MS)
        try:
            return await store.create(_record(f"b{time.monotonic_ns()}"), max_active=1)
        finally:
            await store.close()

    try:
        task_id = replica.stdout.readline().strip()
        assert task_id, "the replica did not start its task"
        client = redis.Redis.from_url(redis_url)
        deadline = time.monotonic() + 3 * LEASE_MS / 1000
        while time.monotonic() < deadline:  # alive: its heartbeats hold the slot well past one lease
            assert not asyncio.run(create_b()), "a live replica's task lost its slot"
            assert client.exists(f"{prefix}task:{task_id}")
            time.sleep(0.1)
        assert _keys_without_expiry(redis_url, prefix) == []
        os.kill(replica.pid, signal.SIGKILL)
        replica.wait(timeout=10)
        killed_at = time.monotonic()
        while not asyncio.run(create_b()):
            assert time.monotonic() - killed_at < LEASE_MS / 1000 + 1.0, "the dead replica's slot was never freed"
            time.sleep(0.05)
        assert not client.exists(f"{prefix}task:{task_id}")
        client.close()
    finally:
        if replica.poll() is None:
            replica.kill()
            replica.wait()
