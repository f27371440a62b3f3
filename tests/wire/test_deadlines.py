"""Deadlines: one timer for every request's deadline, behaving like `asyncio.timeout` per request.

The client's use (a timeout per call, tasks and futures on one timer) is checked property-wise in
tests/client/test_client_properties.py, through its dispatcher."""

from __future__ import annotations

import asyncio

import pytest
import uvloop

from hexmcp.wire.deadlines import Deadlines


async def _sleep_then(seconds: float, value: str) -> str:
    await asyncio.sleep(seconds)
    return value


async def _staggered() -> list[object]:
    deadlines = Deadlines(0.1)

    async def request(seconds: float, start_after: float) -> str:
        await asyncio.sleep(start_after)
        return await deadlines.run(_sleep_then(seconds, f"{seconds}"))

    outcomes = await asyncio.gather(request(0.01, 0), request(0.3, 0), request(0.05, 0.08), request(0.3, 0.05),
                                    return_exceptions=True)
    assert len(deadlines) == 0
    return outcomes


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
def test_only_requests_past_their_own_deadline_time_out(run) -> None:
    fast, slow, late_fast, late_slow = run(_staggered())
    assert (fast, late_fast) == ("0.01", "0.05")  # late_fast ends after slow's deadline: not cut short by it
    assert isinstance(slow, TimeoutError) and isinstance(late_slow, TimeoutError)


def test_other_cancellations_stay_cancellations() -> None:
    async def main() -> None:
        deadlines = Deadlines(10)
        task = asyncio.ensure_future(deadlines.run(_sleep_then(1, "done")))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert len(deadlines) == 0

    asyncio.run(main())


def test_no_timeout_means_no_deadline() -> None:
    async def main() -> str:
        return await Deadlines(None).run(_sleep_then(0.01, "done"))

    assert asyncio.run(main()) == "done"


def test_a_deadlines_object_survives_a_new_event_loop() -> None:
    deadlines = Deadlines(0.05)

    async def main() -> None:
        with pytest.raises(TimeoutError):
            await deadlines.run(_sleep_then(1, "late"))
        assert await deadlines.run(_sleep_then(0, "ok")) == "ok"

    asyncio.run(main())
    asyncio.run(main())


def test_deadlines_given_out_of_order_still_fire_each_on_time() -> None:
    """Per-call timeouts (the client's): a later, shorter deadline is not held up by an earlier, longer one;
    a watched future fails on its own deadline, and one answered in time is left alone."""
    async def main() -> None:
        deadlines = Deadlines()
        loop = asyncio.get_running_loop()
        long = asyncio.ensure_future(deadlines.run(_sleep_then(1, "long"), seconds=0.3))
        await asyncio.sleep(0)
        short = asyncio.ensure_future(deadlines.run(_sleep_then(1, "short"), seconds=0.05))
        watched, answered = loop.create_future(), loop.create_future()
        deadlines.watch(watched, 0.1)
        deadlines.watch(answered, 0.02)
        answered.set_result("in time")
        started = loop.time()
        with pytest.raises(TimeoutError):
            await short
        assert loop.time() - started < 0.2
        with pytest.raises(TimeoutError):
            await watched
        assert not long.done() and answered.result() == "in time"
        with pytest.raises(TimeoutError):
            await long
        assert len(deadlines) == 0

    asyncio.run(main())
