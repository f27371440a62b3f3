"""The inference pool on a fake model: parallel workers, bounds, abandoned work, shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from hexmcp.tools.embedding.errors import ServiceNotReadyError
from hexmcp.tools.embedding.inference_pool import InferencePool, RequestTimeoutError, ServiceOverloadedError


class Gate:
    """A fake model whose passes block until released, recording what ran on which thread."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.ran: list[tuple[str, str]] = []
        self.waiting: list[str] = []  # the items whose pass a worker has started (and holds until the release)
        self.lock = threading.Lock()

    def __call__(self, item: str) -> str:
        with self.lock:
            self.waiting.append(item)
        self.release.wait(timeout=10)
        with self.lock:
            self.ran.append((item, threading.current_thread().name))
        return item.upper()


async def _until(condition, within: float = 10.0) -> None:
    """Wait until `condition` holds: what a worker thread has done by then, which a fixed sleep only guessed
    (a loaded machine runs the thread later)."""
    async with asyncio.timeout(within):
        while not condition():
            await asyncio.sleep(0.005)


@contextlib.contextmanager
def gated_pool(**settings):
    gate = Gate()
    pool = InferencePool(gate, **settings)
    try:
        yield gate, pool
    finally:
        gate.release.set()
        pool.close()


def test_workers_run_in_parallel_and_answer_each_caller():
    with gated_pool(workers=2, max_queue=16, timeout=5) as (gate, pool):

        async def main():
            calls = [asyncio.ensure_future(pool.submit(f"t{i}")) for i in range(6)]
            await _until(lambda: len(gate.waiting) == 2)  # each worker holds one
            gate.release.set()
            return await asyncio.gather(*calls)

        assert asyncio.run(main()) == [f"T{i}" for i in range(6)]
        assert len({thread for _, thread in gate.ran}) == 2 and pool.completed == 6


def test_full_queue_is_refused_at_once():
    with gated_pool(workers=1, max_queue=2, timeout=5) as (gate, pool):

        async def main():
            held = [asyncio.ensure_future(pool.submit("a")), asyncio.ensure_future(pool.submit("b"))]
            await asyncio.sleep(0)
            with pytest.raises(ServiceOverloadedError):
                await pool.submit("c")
            gate.release.set()
            return await asyncio.gather(*held)

        assert asyncio.run(main()) == ["A", "B"]


def test_one_client_cannot_take_the_whole_queue():
    with gated_pool(workers=1, max_queue=8, timeout=5) as (gate, pool):  # 2 places per client

        async def main():
            held = [asyncio.ensure_future(pool.submit(f"a{i}", owner="greedy")) for i in range(2)]
            await asyncio.sleep(0)
            with pytest.raises(ServiceOverloadedError, match="limit per client"):
                await pool.submit("a2", owner="greedy")
            others = [asyncio.ensure_future(pool.submit(f"b{i}", owner="polite")) for i in range(2)]
            anonymous = asyncio.ensure_future(pool.submit("c"))
            gate.release.set()
            return await asyncio.gather(*held, *others, anonymous)

        assert asyncio.run(main()) == ["A0", "A1", "B0", "B1", "C"]
        assert pool._by_owner == {}  # released as answers arrive


def test_work_nobody_waits_for_is_dropped():
    # Timed-out and cancelled callers (a client that disconnected) must not keep the workers busy.
    with gated_pool(workers=1, max_queue=64, timeout=0.2) as (gate, pool):
        _check_abandoned_work_is_dropped(gate, pool)


def _check_abandoned_work_is_dropped(gate: Gate, pool: InferencePool) -> None:

    async def main():
        first = asyncio.ensure_future(pool.submit("running"))
        await _until(lambda: gate.waiting == ["running"])
        waiting = [asyncio.ensure_future(pool.submit(f"gone{i}")) for i in range(20)]
        await asyncio.sleep(0.01)
        for task in waiting[:10]:
            task.cancel()
        outcomes = await asyncio.gather(first, *waiting, return_exceptions=True)
        gate.release.set()
        await _until(lambda: pool.dropped == 20)  # the worker reaches the abandoned entries
        return outcomes

    outcomes = asyncio.run(main())
    assert isinstance(outcomes[0], RequestTimeoutError)
    assert all(isinstance(o, asyncio.CancelledError) for o in outcomes[1:11])
    assert all(isinstance(o, RequestTimeoutError) for o in outcomes[11:])
    assert [item for item, _ in gate.ran] == ["running"]  # nothing else ran
    assert pool.dropped == 20


def test_close_stops_workers_and_refuses_new_work():
    gate = Gate()
    gate.release.set()
    pool = InferencePool(gate, workers=2, max_queue=4, timeout=5)
    pool.close()
    assert not any(thread.is_alive() for thread in pool._threads)

    async def late():
        with pytest.raises(ServiceNotReadyError, match="shutting down"):
            await pool.submit("x")

    asyncio.run(late())
    pool.close()  # idempotent


def test_process_exit_with_a_backlog_is_clean():
    # The interpreter used to finalise while a daemon worker sat inside the model: SIGABRT, exit 134.
    code = """
import asyncio, time
from hexmcp.tools.embedding.inference_pool import InferencePool
def slow(item):
    time.sleep(0.02)
    return item
pool = InferencePool(slow, workers=2, max_queue=1000, timeout=0.05)
async def main():
    await asyncio.gather(*(pool.submit(i) for i in range(200)), return_exceptions=True)
asyncio.run(main())
print("done", flush=True)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout.strip()) == (0, "done"), out.stderr


class BatchGate(Gate):
    """A fake batching model: passes block until released and record each batch they ran."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def many(self, items: list[str]) -> list[str]:
        with self.lock:
            self.waiting.extend(items)
        self.release.wait(timeout=10)
        with self.lock:
            self.batches.append(list(items))
            self.ran.extend((item, threading.current_thread().name) for item in items)
        if "boom" in items:
            raise ValueError("model failed")
        return [item.upper() for item in items]


@contextlib.contextmanager
def batching_pool(**settings):
    gate = BatchGate()
    pool = InferencePool(gate, process_batch=gate.many, **settings)
    try:
        yield gate, pool
    finally:
        gate.release.set()
        pool.close()


def test_requests_queued_behind_a_pass_share_the_next_one_up_to_the_cap():
    with batching_pool(workers=1, max_queue=64, timeout=5, max_batch=4) as (gate, pool):

        async def main():
            first = asyncio.ensure_future(pool.submit("first"))
            await _until(lambda: gate.waiting == ["first"])  # the worker holds "first" alone
            queued = [asyncio.ensure_future(pool.submit(f"q{i}")) for i in range(6)]
            await asyncio.sleep(0.01)
            gate.release.set()
            return await asyncio.gather(first, *queued)

        assert asyncio.run(main()) == ["FIRST"] + [f"Q{i}" for i in range(6)]
        assert gate.batches == [["first"], ["q0", "q1", "q2", "q3"], ["q4", "q5"]]
        assert pool.batches == 3 and pool.completed == 7


class HeldBatches:
    """A fake batching model: a batch holding a "hold-…" item blocks until that item is released; others
    run at once. Records each batch and the thread that ran it."""

    def __init__(self) -> None:
        self.held = {name: threading.Event() for name in ("hold-a", "hold-b")}
        self.batches: list[tuple[str, list[str]]] = []
        self.started: list[str] = []  # the items of the passes begun
        self.lock = threading.Lock()

    def many(self, items: list[str]) -> list[str]:
        with self.lock:
            self.started.extend(items)
        for item in items:
            if item in self.held:
                self.held[item].wait(timeout=10)
        with self.lock:
            self.batches.append((threading.current_thread().name, list(items)))
        return [item.upper() for item in items]


def test_a_worker_takes_its_share_of_every_outstanding_request_not_half_the_queue():
    # Two workers, each held on one request, six more queued behind them: eight outstanding. The worker
    # released first takes four (8 / 2 workers), not three (half the queue), and then the last two,
    # while the other worker is still busy: passes stay full instead of halving round after round.
    model = HeldBatches()
    pool = InferencePool(str.upper, process_batch=model.many, workers=2, max_queue=64, timeout=5, max_batch=32)
    try:

        async def main():
            held_a = asyncio.ensure_future(pool.submit("hold-a"))
            await _until(lambda: model.started == ["hold-a"])  # one worker runs it
            held_b = asyncio.ensure_future(pool.submit("hold-b"))
            await _until(lambda: model.started == ["hold-a", "hold-b"])  # the other runs this one
            queued = [asyncio.ensure_future(pool.submit(f"q{i}")) for i in range(6)]
            await asyncio.sleep(0.05)
            model.held["hold-a"].set()
            answers = await asyncio.gather(held_a, *queued)
            model.held["hold-b"].set()
            return answers + [await held_b]

        assert asyncio.run(main()) == ["HOLD-A"] + [f"Q{i}" for i in range(6)] + ["HOLD-B"]
        (first_thread, _), *_ = model.batches
        assert [items for thread, items in model.batches if thread == first_thread] == [
            ["hold-a"], ["q0", "q1", "q2", "q3"], ["q4", "q5"]
        ]
        assert [items for thread, items in model.batches if thread != first_thread] == [["hold-b"]]
    finally:
        for event in model.held.values():
            event.set()
        pool.close()


def test_a_lone_request_waits_at_most_the_window():
    with batching_pool(workers=1, max_queue=8, timeout=5, max_batch=32, batch_window_s=0.03) as (gate, pool):
        gate.release.set()

        async def one():
            started = time.perf_counter()
            answer = await pool.submit("alone")
            return answer, time.perf_counter() - started

        answer, waited = asyncio.run(one())
        assert answer == "ALONE" and 0.03 <= waited < 0.5 and gate.batches == [["alone"]]


def test_without_a_window_a_lone_request_is_not_held_back():
    """Judged by what the worker does, not by a clock a loaded machine slows: it never waits on the queue
    with a timeout (a window's wait for batch-mates), only for the next request."""
    with batching_pool(workers=1, max_queue=8, timeout=5, max_batch=32) as (gate, pool):
        gate.release.set()
        timeouts: list[float | None] = []

        class Watched:  # the queue, its blocking reads recorded (the worker blocked on it already sees puts)
            def __init__(self, queue: Any) -> None:
                self.queue = queue

            def __getattr__(self, name: str) -> Any:
                return getattr(self.queue, name)

            def get(self, block: bool = True, timeout: float | None = None) -> Any:
                timeouts.append(timeout)
                return self.queue.get(block, timeout)

        pool._queue = Watched(pool._queue)
        assert asyncio.run(pool.submit("alone")) == "ALONE"
        assert asyncio.run(pool.submit("again")) == "AGAIN" and gate.batches == [["alone"], ["again"]]
        assert timeouts and set(timeouts) == {None}


def test_a_failed_batch_fails_each_of_its_callers_and_the_pool_goes_on():
    with batching_pool(workers=1, max_queue=16, timeout=5, max_batch=8) as (gate, pool):

        async def main():
            first = asyncio.ensure_future(pool.submit("first"))
            await _until(lambda: gate.waiting == ["first"])  # the worker holds "first" alone
            doomed = [asyncio.ensure_future(pool.submit(item)) for item in ("a", "boom", "b")]
            await asyncio.sleep(0.01)
            gate.release.set()
            outcomes = await asyncio.gather(first, *doomed, return_exceptions=True)
            return outcomes, await pool.submit("after")

        outcomes, after = asyncio.run(main())
        assert outcomes[0] == "FIRST" and all(isinstance(o, ValueError) for o in outcomes[1:])
        assert after == "AFTER"


def test_abandoned_requests_are_left_out_of_a_batch():
    with batching_pool(workers=1, max_queue=64, timeout=0.2, max_batch=32) as (gate, pool):
        _check_abandoned_work_is_dropped(gate, pool)


def test_batching_needs_a_batch_function():
    with pytest.raises(ValueError, match="process_batch"):
        InferencePool(str.upper, workers=1, max_queue=1, timeout=1, max_batch=4)
