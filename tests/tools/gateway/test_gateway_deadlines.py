"""Deadlines: one timer keeps TIMEOUT for every gateway call in flight, with asyncio.timeout's behaviour."""

from __future__ import annotations

import asyncio

import pytest

from hexmcp.tools.gateway.outbound.deadlines import Deadlines

pytestmark = pytest.mark.timeout(30)


async def _call(deadlines: Deadlines, work_s: float) -> str:
    try:
        async with deadlines():
            await asyncio.sleep(work_s)
            return "done"
    except TimeoutError:
        return "timed out"


def test_a_call_within_its_deadline_ends_as_it_would_and_one_past_it_raises_timeout_at_the_deadline():
    async def run():
        deadlines = Deadlines(0.2)
        assert await _call(deadlines, 0.01) == "done"
        loop = asyncio.get_running_loop()
        started = loop.time()
        assert await _call(deadlines, 5.0) == "timed out"
        return loop.time() - started
    assert 0.19 <= asyncio.run(run()) < 1.0


def test_calls_begun_at_different_times_each_get_their_own_deadline():
    async def run():
        deadlines = Deadlines(0.3)
        loop = asyncio.get_running_loop()
        ends: dict[str, tuple[str, float]] = {}
        started = loop.time()

        async def one(name: str, delay_s: float, work_s: float) -> None:
            await asyncio.sleep(delay_s)
            ends[name] = (await _call(deadlines, work_s), loop.time() - started)

        await asyncio.gather(one("short", 0.0, 0.05), one("slow", 0.0, 5.0), one("late slow", 0.15, 5.0),
                             one("late quick", 0.2, 0.2))
        return ends
    ends = asyncio.run(run())
    assert ends["short"][0] == "done" and ends["late quick"][0] == "done"
    assert ends["slow"][0] == "timed out" and 0.29 <= ends["slow"][1] < 0.45
    assert ends["late slow"][0] == "timed out" and 0.44 <= ends["late slow"][1] < 0.6


def test_a_cancellation_from_elsewhere_stays_a_cancellation():
    async def run():
        deadlines = Deadlines(5.0)
        task = asyncio.ensure_future(_call(deadlines, 5.0))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await _call(deadlines, 0.0) == "done"  # and the next call is unaffected
    asyncio.run(run())


def test_a_cancellation_arriving_with_the_deadline_is_not_swallowed_as_a_timeout():
    async def run():
        deadlines = Deadlines(0.05)
        entered = asyncio.Event()

        async def body() -> None:
            async with deadlines():
                entered.set()
                try:
                    await asyncio.sleep(5.0)
                finally:
                    await asyncio.sleep(0.1)  # the deadline passes meanwhile: a second cancel request is pending

        task = asyncio.ensure_future(body())
        await entered.wait()
        task.cancel()
        await asyncio.sleep(0.08)
        with pytest.raises(asyncio.CancelledError):
            await task
    asyncio.run(run())


def test_the_timer_stops_when_no_call_is_in_flight_and_a_new_loop_starts_afresh():
    deadlines = Deadlines(0.05)

    async def run():
        assert await _call(deadlines, 0.0) == "done"
        await asyncio.sleep(0.1)  # the timer armed for that call fires, finds nothing, and is not re-armed
        assert deadlines._timer is None and not deadlines._calls
        assert await _call(deadlines, 0.0) == "done"  # arms the timer again; the loop closes before it fires

    asyncio.run(run())
    assert deadlines._timer is not None

    async def again():  # a loop closed with a timer armed leaves nothing behind for the next one
        assert await _call(deadlines, 0.0) == "done"
        assert await _call(deadlines, 1.0) == "timed out"
    asyncio.run(again())
