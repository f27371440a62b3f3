"""Deadlines: one timer for every request's deadline, behaving like `asyncio.timeout` per request."""

from __future__ import annotations

import asyncio

import pytest
import uvloop

from hexmcp.adapters.http.deadlines import Deadlines


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
