"""A `TaskStore` in Redis (redis-py's asyncio client), so that `--stateless` replicas behind a load
balancer share their tasks: any replica answers `tasks/get`, and `tasks/update` / `tasks/cancel` reach
the replica running the work through a per-task signal list it waits on (BLPOP).

Keys, under a prefix (default `hexmcp:`): `task:<id>` holds the record as JSON, with Redis's own expiry
once the task has ended (PXAT its `expires_at`); `active:<owner>` is the set of an owner's unfinished task
ids, which bounds them (checked and added in one Lua script, so two replicas cannot both admit the
bound's last task); `signals:<id>` is the task's signal list.

Why Redis: docs/adr/1002-task-store-redis.md.
"""

from __future__ import annotations

import orjson
import redis.asyncio as redis

from hexmcp.core.tasks.model import TaskRecord, TaskSignal

# KEYS: active set, record key. ARGV: bound, task id, record JSON. 1 if stored, 0 if at the bound.
_CREATE = """
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[3])
return 1
"""
_SIGNAL_KEEP_MS = 3_600_000  # a signal list outlives no task by more than this, even if its runner died


class RedisTaskStore:
    def __init__(self, url: str, *, prefix: str = "hexmcp:") -> None:
        self._redis = redis.Redis.from_url(url)
        self._prefix = prefix
        self._create = self._redis.register_script(_CREATE)

    async def create(self, record: TaskRecord, *, max_active: int) -> bool:
        stored = await self._create(keys=[self._active(record.owner), self._record(record.task_id)],
                                    args=[max_active, record.task_id, orjson.dumps(record.to_json())])
        return bool(stored)

    async def get(self, task_id: str) -> TaskRecord | None:
        raw = await self._redis.get(self._record(task_id))
        return None if raw is None else TaskRecord.from_json(orjson.loads(raw))

    async def save(self, record: TaskRecord) -> None:
        async with self._redis.pipeline(transaction=True) as pipe:
            expires = record.expires_at
            if expires is None:
                pipe.set(self._record(record.task_id), orjson.dumps(record.to_json()))
            else:
                pipe.set(self._record(record.task_id), orjson.dumps(record.to_json()), pxat=int(expires * 1000))
                pipe.srem(self._active(record.owner), record.task_id)
                pipe.delete(self._signals(record.task_id))
            await pipe.execute()

    async def signal(self, task_id: str, signal: TaskSignal) -> None:
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.rpush(self._signals(task_id), orjson.dumps(signal.to_json()))
            pipe.pexpire(self._signals(task_id), _SIGNAL_KEEP_MS)
            await pipe.execute()

    async def next_signal(self, task_id: str, timeout_s: float) -> TaskSignal | None:
        popped = await self._redis.blpop([self._signals(task_id)], timeout=timeout_s)
        return None if popped is None else TaskSignal.from_json(orjson.loads(popped[1]))

    async def close(self) -> None:
        await self._redis.aclose()

    def _record(self, task_id: str) -> str:
        return f"{self._prefix}task:{task_id}"

    def _active(self, owner: str) -> str:
        return f"{self._prefix}active:{owner}"

    def _signals(self, task_id: str) -> str:
        return f"{self._prefix}signals:{task_id}"
