"""A `TaskStore` in Redis (redis-py's asyncio client), so that `--stateless` replicas behind a load
balancer share their tasks: any replica answers `tasks/get`, and `tasks/update` / `tasks/cancel` reach
the replica running the work through a per-task signal list it waits on (BLPOP).

Keys, under a prefix (default `hexmcp:`): `task:<id>` holds the record as JSON; `leases:<owner>` is a sorted
set of an owner's unfinished task ids, each scored with its lease's end, which bounds them (expired leases
dropped, counted and added in one Lua script, so two replicas cannot both admit the bound's last task);
`signals:<id>` is the task's signal list.

Every key expires. An ended record expires at its `expires_at` (PXAT). An unfinished one is leased: its
record and its place in `leases:` last `lease_ms`, and the replica running it renews both every third of
that (`heartbeat`, called by the runner). A replica that dies stops renewing, so within one lease its
tasks disappear and their owner's slots are free again, instead of counting against the bound forever.
Lease ends are Redis's own clock (TIME inside the scripts), so replicas' clocks need not agree.

Why Redis: docs/adr/1002-task-store-redis.md; the leases: docs/adr/1141-deployment-secure-by-default.md.
"""

from __future__ import annotations

import orjson
import redis.asyncio as redis

from hexmcp.core.tasks.model import TaskRecord, TaskSignal

_NOW_MS = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
"""
# KEYS: leases, record. ARGV: bound, task id, record JSON, lease ms. 1 if stored, 0 if at the bound.
_CREATE = _NOW_MS + """
local lease = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + lease, ARGV[2])
redis.call('PEXPIRE', KEYS[1], lease)
redis.call('SET', KEYS[2], ARGV[3], 'PX', lease)
return 1
"""
# KEYS: leases, record. ARGV: task id, lease ms, record JSON or "" (renew only). 1 if renewed, 0 if the task
# holds no lease any more (it ended, or its lease ran out: it is not brought back).
_RENEW = _NOW_MS + """
local lease = tonumber(ARGV[2])
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[3], 'PX', lease)
else
  redis.call('PEXPIRE', KEYS[2], lease)
end
return 1
"""
_SIGNAL_KEEP_MS = 3_600_000  # a signal list outlives no task by more than this, even if its runner died
DEFAULT_LEASE_MS = 30_000
"""How long an unfinished task outlives the last heartbeat of the replica running it."""


class RedisTaskStore:
    def __init__(self, url: str, *, prefix: str = "hexmcp:", lease_ms: int = DEFAULT_LEASE_MS) -> None:
        if lease_ms <= 0:
            raise ValueError(f"the task lease must be positive, got {lease_ms} ms")
        self._redis = redis.Redis.from_url(url)
        self._prefix = prefix
        self._lease_ms = lease_ms
        self.heartbeat_interval_s = lease_ms / 3000
        """How often the runner calls `heartbeat` for each task it runs: three renewals per lease."""
        self._create = self._redis.register_script(_CREATE)
        self._renew = self._redis.register_script(_RENEW)

    async def create(self, record: TaskRecord, *, max_active: int) -> bool:
        stored = await self._create(keys=[self._leases(record.owner), self._record(record.task_id)],
                                    args=[max_active, record.task_id, orjson.dumps(record.to_json()), self._lease_ms])
        return bool(stored)

    async def get(self, task_id: str) -> TaskRecord | None:
        raw = await self._redis.get(self._record(task_id))
        return None if raw is None else TaskRecord.from_json(orjson.loads(raw))

    async def save(self, record: TaskRecord) -> None:
        expires = record.expires_at
        if expires is None:  # still running: the new record, under a renewed lease
            await self._renew(keys=[self._leases(record.owner), self._record(record.task_id)],
                              args=[record.task_id, self._lease_ms, orjson.dumps(record.to_json())])
            return
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.set(self._record(record.task_id), orjson.dumps(record.to_json()), pxat=int(expires * 1000))
            pipe.zrem(self._leases(record.owner), record.task_id)
            pipe.delete(self._signals(record.task_id))
            await pipe.execute()

    async def heartbeat(self, record: TaskRecord) -> bool:
        """Renew the lease of a task this replica runs; False once it holds none (ended, or lapsed)."""
        renewed = await self._renew(keys=[self._leases(record.owner), self._record(record.task_id)],
                                    args=[record.task_id, self._lease_ms, ""])
        return bool(renewed)

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

    def _leases(self, owner: str) -> str:
        return f"{self._prefix}leases:{owner}"

    def _signals(self, task_id: str) -> str:
        return f"{self._prefix}signals:{task_id}"
