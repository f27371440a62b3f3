"""`indexDocuments`' progress reporter (index_task._ProgressReporter): whatever the order in which the build
thread's counts arrive and however slowly the transport writes, the progress sent only increases, ends at
the last count once flushed (before the answer), and no notification is begun once the call is stopped. The same
behaviour on a real server, per transport: test_knowledge_long_work.py."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.tools.knowledge.index_task import _ProgressReporter


class SlowContext:
    """A ToolContext whose notifications take `delays` loop turns each to write."""

    def __init__(self, delays: list[int]) -> None:
        self.sent: list[tuple[float, Any, Any]] = []
        self.begun = 0
        self._delays = iter(delays)

    async def report_progress(self, progress: float, total: Any = None, message: Any = None) -> None:
        self.begun += 1
        for _ in range(next(self._delays, 0)):
            await asyncio.sleep(0)
        self.sent.append((progress, total, message))


async def feed(reporter: _ProgressReporter, steps: list[tuple[int, int]], done: int = 0, *, extra_turns: int = 0) -> int:
    """What the build thread does: each (passages, pause) adds passages to the count, then lets the loop turn
    `pause` (+ `extra_turns`) times; returns the count reached."""
    for passages, pause in steps:
        done += passages
        reporter.update(done)
        for _ in range(pause + extra_turns):
            await asyncio.sleep(0)
    return done


steps = st.lists(st.tuples(st.integers(1, 13), st.integers(0, 3)), min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(steps=steps, delays=st.lists(st.integers(0, 5), max_size=30))
def test_progress_increases_and_ends_at_the_last_count_before_the_answer(steps: list[tuple[int, int]],
                                                                         delays: list[int]) -> None:
    async def scenario() -> list[tuple[float, Any, Any]]:
        ctx = SlowContext(delays)
        reporter = _ProgressReporter(ctx, 1000)  # type: ignore[arg-type]
        await feed(reporter, steps)
        await reporter.flush()
        reporter.stop()
        return ctx.sent

    sent = asyncio.run(scenario())
    values = [progress for progress, _, _ in sent]
    assert values == sorted(set(values)), values
    assert values[-1] == sum(passages for passages, _ in steps)
    assert all(total == 1000 and message == "indexing passages" for _, total, message in sent)


@settings(max_examples=200, deadline=None)
@given(before=steps, after=steps, delays=st.lists(st.integers(0, 5), max_size=30))
def test_no_notification_is_begun_once_stopped(before: list[tuple[int, int]], after: list[tuple[int, int]],
                                      delays: list[int]) -> None:
    async def scenario() -> tuple[int, int]:
        ctx = SlowContext(delays)
        reporter = _ProgressReporter(ctx, 1000)  # type: ignore[arg-type]
        done = await feed(reporter, before)
        reporter.stop()
        stopped_with = ctx.begun
        await feed(reporter, after, done, extra_turns=5)
        return stopped_with, ctx.begun

    stopped_with, finally_begun = asyncio.run(scenario())
    assert finally_begun == stopped_with, "a notification was begun after the call was stopped"
