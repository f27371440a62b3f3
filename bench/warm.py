"""Wait until a started `hexmcp serve` has finished its start-up work, before measuring anything.

/health answers "ok" as soon as the classifier is ready, but the knowledge index and the concepts keep
both cores busy for seconds after that (100-190 % CPU for 4-5 s on the 2-core machine). A benchmark that
starts then measures that contention: its first rounds had a c1 p99 of 115 ms instead of 8. So wait for
both signals: /health's `warm` (every component's start-up work done; a checkout older than that field
has only its readiness), then the process's own CPU time standing still, which also covers work /health
does not know about (first-call imports, caches written after start-up).
"""

from __future__ import annotations

import time

import httpx

from bench.quiet import wait_until_quiet

IDLE_WINDOWS = 2  # consecutive idle windows, so a pause between two build phases is not taken for the end


def wait_warm(pid: int, base_url: str, timeout_s: float = 120.0) -> float:
    """Blocks until the server at `base_url` (process `pid`, which this machine runs) says `warm` and
    then goes quiet (bench/quiet.py) for IDLE_WINDOWS windows in a row; returns the seconds waited.
    Raises TimeoutError naming what it was still waiting for."""
    started = time.monotonic()
    deadline = started + timeout_s
    while not _reports_warm(base_url):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{base_url}/health never reported warm in {timeout_s:g} s")
        time.sleep(0.2)
    wait_until_quiet(pid, windows=IDLE_WINDOWS, timeout_s=max(0.0, deadline - time.monotonic()), strict=True)
    return time.monotonic() - started


def _reports_warm(base_url: str) -> bool:
    try:
        response = httpx.get(f"{base_url}/health", timeout=2)
    except httpx.TransportError:
        return False
    return response.status_code == 200 and response.json().get("warm", True)
