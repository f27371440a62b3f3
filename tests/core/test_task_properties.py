"""Properties of the task machinery: the status table, ttl, the per-client bound, the record's round trip."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.core.tasks.memory_store import MemoryTaskStore
from hexmcp.core.tasks.model import TERMINAL, TRANSITIONS, IllegalTransition, TaskLimits, TaskRecord, TaskStatus

LIMITS = TaskLimits(ttl_ms=10_000, poll_interval_ms=100, max_active_per_client=3)
statuses = st.sampled_from(list(TaskStatus))
moves = st.lists(st.tuples(statuses, st.floats(min_value=0, max_value=100)), max_size=12)
answers = st.dictionaries(st.text(max_size=5), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                          max_size=3)


def new_record(owner: str = "alice", now: float = 1_000.0, task_id: str = "t") -> TaskRecord:
    return TaskRecord.new(task_id=task_id, owner=owner, now=now, limits=LIMITS)


@given(moves, answers)
def test_status_changes_follow_the_table_and_ended_tasks_never_change(steps, questions) -> None:
    record = new_record()
    now = record.created_at
    for status, delay in steps:
        now += delay
        allowed = status in TRANSITIONS[record.status]
        try:
            moved = record.moved(status, now=now, input_requests=questions, result={"content": []},
                                 error={"code": -1, "message": "x"}, keep_for_ms=LIMITS.ttl_ms)
        except IllegalTransition:
            assert not allowed
            continue
        assert allowed
        assert moved.last_updated_at >= record.last_updated_at
        assert moved.ttl_ms >= record.ttl_ms
        wire = moved.wire()
        assert ("result" in wire) == (status is TaskStatus.COMPLETED)
        assert ("error" in wire) == (status is TaskStatus.FAILED)
        assert ("inputRequests" in wire) == (status is TaskStatus.INPUT_REQUIRED)
        assert not {"result", "error", "inputRequests"} & moved.creation_wire().keys()
        record = moved
    if record.terminal:
        for status in TaskStatus:
            try:
                record.moved(status, now=now)
                raise AssertionError(f"an ended task moved to {status}")
            except IllegalTransition:
                pass


@given(st.sampled_from(sorted(TERMINAL)), st.floats(min_value=0, max_value=10_000), st.floats(min_value=0, max_value=50))
def test_an_ended_task_is_kept_for_its_ttl_from_when_it_ended(status, ran_for_s, later_s) -> None:
    record = new_record()
    ended_at = record.created_at + ran_for_s
    ended = record.moved(status, now=ended_at, keep_for_ms=LIMITS.ttl_ms)
    assert not record.expired(ended_at + 10 ** 9), "a running task never expires"
    assert ended.expires_at is not None and ended.expires_at >= ended_at + LIMITS.ttl_ms / 1000 - 0.001
    ttl_s = LIMITS.ttl_ms / 1000
    assert not ended.expired(ended_at + min(later_s, ttl_s - 0.002)), "forgotten before its ttl ran out"
    assert ended.expired(ended_at + ttl_s + 0.002 + later_s), "kept past its ttl"
    assert isinstance(ended.wire()["ttlMs"], int)


@given(st.lists(st.tuples(st.sampled_from(["alice", "bob"]), st.booleans()), max_size=25))
@settings(max_examples=60)
def test_no_client_ever_has_more_unfinished_tasks_than_the_bound(operations) -> None:
    async def run() -> None:
        store = MemoryTaskStore(clock=lambda: 1_000.0)
        live: dict[str, list[TaskRecord]] = {"alice": [], "bob": []}
        for index, (owner, create) in enumerate(operations):
            if create:
                record = new_record(owner, task_id=f"t{index}")
                accepted = await store.create(record, max_active=LIMITS.max_active_per_client)
                assert accepted == (len(live[owner]) < LIMITS.max_active_per_client)
                if accepted:
                    live[owner].append(record)
            elif live[owner]:
                ending = live[owner].pop(0)
                await store.save(ending.moved(TaskStatus.COMPLETED, now=1_000.0, result={"content": []}))
        for owner, records in live.items():
            for record in records:
                assert (await store.get(record.task_id)) == record

    asyncio.run(run())


@given(moves)
def test_a_record_survives_its_json_form(steps) -> None:
    record = new_record()
    for status, delay in steps:
        try:
            record = record.moved(status, now=record.last_updated_at + delay, input_requests={"k": {"method": "m"}},
                                  result={"content": [{"type": "text", "text": "t"}]}, error={"code": 1})
        except IllegalTransition:
            pass
        assert TaskRecord.from_json(record.to_json()) == record
