"""Wait until a server process has finished its start-up work, so a benchmark measures calls, not start-up.

`hexmcp stdio` answers `initialize` at once and then loads the model, indexes the knowledge corpus and
extracts concepts in background threads for several seconds (about 10-20 s of one core on a loaded
2-core machine). Round trips measured meanwhile wait for the GIL behind that work: they measure the
start-up, not the per-call cost. The process's own CPU time (Linux `/proc/<pid>/stat`) says when it is done.
"""

from __future__ import annotations

import os
import time

_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process so far; None where /proc cannot tell (not Linux, process gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS_PER_S  # utime, stime (fields 14 and 15 of stat(5))


def wait_until_quiet(pid: int, *, busy_share: float = 0.05, window_s: float = 0.5, windows: int = 1,
                     timeout_s: float = 60.0, strict: bool = False) -> float:
    """Block until the process used under `busy_share` of one core over `windows` consecutive `window_s`
    windows (several, so a pause between two build phases is not taken for the end); returns the seconds
    waited. At `timeout_s` a server that never goes quiet is measured anyway, or with `strict` raises
    TimeoutError. A process that has gone is quiet."""
    started = time.monotonic()
    before = cpu_seconds(pid)
    idle = 0
    while before is not None and idle < windows:
        if time.monotonic() - started >= timeout_s:
            if strict:
                raise TimeoutError(f"process {pid} still used CPU after {timeout_s:g} s")
            break
        time.sleep(window_s)
        after = cpu_seconds(pid)
        if after is None:
            break
        idle = idle + 1 if after - before < busy_share * window_s else 0
        before = after
    return time.monotonic() - started
