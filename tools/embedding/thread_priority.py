"""Lowering the calling thread's CPU scheduling priority, so the inference workers yield to the event loop.

Under heavy load every core runs a forward pass nearly all the time. At the same priority, the event
loop thread (which reads requests and writes answers) waits for a core behind a pass, and an answer
already computed waits with it.
A worker a few nice steps down still gets every core cycle nobody else wants, but a thread that wakes
at normal priority runs at once. Opt-in (`--classifier-nice`): the workers yield to every other busy
process on the machine as well, and classification throughput did not gain from it.

On Linux, niceness is per thread: `setpriority(PRIO_PROCESS, tid, n)` changes that thread alone, and
raising one's own niceness needs no privilege. Elsewhere the same call would renice the whole process
(the event loop with it), so it is not made.
"""

from __future__ import annotations

import os
import sys
import threading

import attrs

MAX_NICENESS = 19
"""The lowest priority a Unix niceness expresses."""


@attrs.frozen(kw_only=True)
class PriorityChange:
    """What lowering a thread's priority did: `niceness` before and after, or why it was not changed."""

    before: int | None
    after: int | None
    skipped: str | None = None
    """Why nothing changed (not Linux, the call refused): the thread runs on at its old priority."""


def lower_current_thread(increment: int) -> PriorityChange:
    """Adds `increment` to the calling thread's niceness (capped at 19); 0 changes nothing. Never raises:
    a refusal (a seccomp profile, an unusual kernel) leaves the thread as it was and says why."""
    if increment <= 0:
        return PriorityChange(before=None, after=None, skipped="no increment asked for")
    if not sys.platform.startswith("linux"):
        return PriorityChange(before=None, after=None, skipped="per-thread niceness needs Linux")
    thread = threading.get_native_id()
    try:
        before = os.getpriority(os.PRIO_PROCESS, thread)
        after = min(MAX_NICENESS, before + increment)
        os.setpriority(os.PRIO_PROCESS, thread, after)
    except OSError as error:
        return PriorityChange(before=None, after=None, skipped=f"setpriority refused: {error.strerror or error}")
    return PriorityChange(before=before, after=after)
