"""Wait until a started `hexmcp serve` has finished its start-up work, before measuring anything.

/health answers "ok" as soon as the classifier is ready, but the knowledge index and the concepts keep
both cores busy for seconds after that (100-190 % CPU for 4-5 s on the 2-core machine). A benchmark that
starts then measures that contention: its first rounds had a c1 p99 of 115 ms instead of 8. So wait for
both signals: /health's `warm` (every component's start-up work done; a checkout older than that field
has only its readiness), then the process's own CPU time standing still, which also covers work /health
does not know about (first-call imports, caches written after start-up).
"""

from __future__ import annotations

import os
import time

import httpx

IDLE_SHARE = 0.05  # of one core: an idle server's timers and sweepers stay far below this
IDLE_WINDOWS = 2  # consecutive windows, so a pause between two build phases is not taken for the end
WINDOW_S = 0.5
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of every thread of `pid` so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # fields 14 and 15 of proc(5), counted after the name


def wait_warm(pid: int, base_url: str, timeout_s: float = 120.0) -> float:
    """Blocks until the server at `base_url` (process `pid`, which this machine runs) says `warm` and
    has used under IDLE_SHARE of a core for IDLE_WINDOWS windows in a row; returns the seconds waited.
    Raises TimeoutError naming what it was still waiting for."""
    started = time.monotonic()
    deadline = started + timeout_s
    while not _reports_warm(base_url):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{base_url}/health never reported warm in {timeout_s:g} s")
        time.sleep(0.2)
    idle = 0
    while idle < IDLE_WINDOWS:
        if time.monotonic() > deadline:
            raise TimeoutError(f"process {pid} still used CPU after {timeout_s:g} s")
        before = cpu_seconds(pid)
        time.sleep(WINDOW_S)
        idle = idle + 1 if cpu_seconds(pid) - before < IDLE_SHARE * WINDOW_S else 0
    return time.monotonic() - started


def _reports_warm(base_url: str) -> bool:
    try:
        response = httpx.get(f"{base_url}/health", timeout=2)
    except httpx.TransportError:
        return False
    return response.status_code == 200 and response.json().get("warm", True)
