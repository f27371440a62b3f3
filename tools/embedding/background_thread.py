"""Threads for background work (indexing, re-indexing, concept extraction): known as background, so their
model passes wait for the foreground (foreground_gate.py) and their query embeddings are not counted as
foreground, and optionally a few nice steps below the threads that answer requests.

Each such thread is made for the work and lowered once: on Linux raising a thread's priority back
needs a privilege, so a thread of asyncio's shared executor, once lowered, would stay lowered for
the requests it runs next. Niceness is per thread on Linux only (thread_priority.py); elsewhere the
threads keep their priority and only the gate applies.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import structlog

from .gil_handoff import quick_handoff
from .thread_priority import lower_current_thread

log = structlog.get_logger(__name__)

T = TypeVar("T")

BACKGROUND_NICE_INCREMENT = 0
"""Nice steps below the server's threads, by default none: measured on the shared 2-core machine
(bench/diaries/background.md), 10 steps down made both figures worse — c=1 p99 during indexing 2.55x
idle against 1.56x with the gate alone, and indexing with an idle foreground 20 against 46 passages/s.
A lowered thread yields to every other busy process on the machine too, and one descheduled while it
holds the GIL (tokenizing, numpy) stalls the foreground behind it. `HEXMCP_BACKGROUND_NICE` (0..19)
lowers them where the server has the cores to itself."""
PASS_NICE_INCREMENT = 10
"""Nice steps below the server's threads for the threads that run background model passes (pass_thread):
they hold the GIL only around a pass (onnxruntime and the tokenizer let go of it), so a lowered one
does not stall the foreground behind the interpreter, and a request's threads (and on this machine its
client) preempt it at once instead of sharing a core with it. Measured: bench/diaries/background.md."""
NICE_ENV = "HEXMCP_BACKGROUND_NICE"


def background_nice_increment(passes: bool = False) -> int:
    """The increment to use: $HEXMCP_BACKGROUND_NICE when it is a number in 0..19 (for every background
    thread), else the default of the thread's kind (`passes`: one that runs model passes)."""
    import os

    value = os.environ.get(NICE_ENV, "")
    if value.isdigit() and int(value) <= 19:
        return int(value)
    return PASS_NICE_INCREMENT if passes else BACKGROUND_NICE_INCREMENT

_local = threading.local()


def in_background() -> bool:
    """Whether the calling thread was made a background thread (become_background)."""
    return getattr(_local, "background", False)


def become_background(increment: int | None = None, *, passes: bool = False) -> None:
    """Marks the calling thread as background and lowers its priority (for a thread made for background
    work only: it is never raised again). Used as a pool's thread initializer too (pass_thread)."""
    if in_background():
        return
    _local.background = True
    increment = background_nice_increment(passes) if increment is None else increment
    # Relative to the process (its main thread), not to this thread: a thread inherits its creator's niceness,
    # and a pool made by a background thread would otherwise go down twice.
    try:
        import os

        increment -= os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) - os.getpriority(os.PRIO_PROCESS, os.getpid())
    except (AttributeError, OSError):  # no per-thread niceness here: lower_current_thread says so
        pass
    change = lower_current_thread(increment)
    if change.skipped is not None and increment > 0:
        log.debug("background thread keeps its priority", reason=change.skipped)


def pass_thread() -> None:
    """Initializer of a pool whose threads run background model passes: background, PASS_NICE_INCREMENT down."""
    become_background(passes=True)


def _run_job(function: Callable[..., T], args: tuple[Any, ...], loop: asyncio.AbstractEventLoop,
             outcome: asyncio.Future[T]) -> None:
    """Runs on a background thread: `function(*args)`, its result or exception handed to `outcome` on `loop`."""
    def deliver(ok: bool, value: Any) -> None:
        if outcome.done():
            return
        if ok:
            outcome.set_result(value)
        else:
            outcome.set_exception(value)

    become_background()
    try:
        with quick_handoff():  # requests get the GIL back sooner while this runs (gil_handoff.py)
            result: tuple[bool, Any] = (True, function(*args))
    except BaseException as error:  # delivered to the awaiting caller, never lost in the thread
        result = (False, error)
    try:
        loop.call_soon_threadsafe(deliver, *result)
    except RuntimeError:  # the loop is closed: nobody waits any more
        pass


def _name_thread(name: str) -> None:
    threading.current_thread().name = name  # what logs and py-spy show for the thread


class BuildThread:
    """One long-lived background thread that runs a service's builds in turn (index builds, each handing state
    on to the next; concept extraction; a manual re-index), every background job of the server's.

    A thread allocates from one glibc malloc arena, and an arena keeps what is freed in it: a thread arena's
    top is given back only past a trim threshold that glibc raises with the largest block it has unmapped (to
    as much as 64 MB). With a new thread per build, once the process had its 16 arenas (8 per core) each new
    build thread was handed the next arena in turn, and each arena a re-index ran in kept that build's ~27 MB:
    the server's RSS went 360 -> 740-780 MB over eight bursts of edits in half the runs. On one thread every
    build reuses the memory the build before it freed (bench/diaries/knowledge_scale.md, ADR 0615). The
    thread is made at the first build and lives as long as this object. It is not a daemon: concurrent.futures
    joins it at interpreter exit, after the build in hand, rather than finalising the interpreter under a pass
    inside onnxruntime (which aborts the process); a build's own cancel flag is what stops it sooner."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._executor: Any = None  # made at the first build: a service made at start-up imports nothing for it

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` on this object's thread, after any build already queued, at background priority and
        with the background switch interval; the caller awaits its result or exception. Cancelling the caller
        does not stop the build (nothing can): the function's own cancel flag must."""
        if self._executor is None:
            from concurrent.futures import ThreadPoolExecutor

            # The worker holds its initializer for its whole life: a bound method would keep this object, and so
            # the executor, alive for ever; a plain function lets the thread end when this object goes.
            self._executor = ThreadPoolExecutor(max_workers=1, initializer=_name_thread, initargs=(self.name,))
        loop = asyncio.get_running_loop()
        outcome: asyncio.Future[T] = loop.create_future()
        self._executor.submit(_run_job, function, args, loop, outcome)
        return await outcome

    def close(self) -> None:
        """No more builds: the thread ends once the one in hand (if any) is done (never waited for here)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False)
