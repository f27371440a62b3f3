"""Loopback helpers for tests that run a real server: a free port, and uvicorn in a thread."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any, Iterator


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def uvicorn_in_thread(uvicorn_server: Any, *, what: str = "server", stop_timeout_s: float = 10) -> Iterator[threading.Thread]:
    """Run `uvicorn_server` in a daemon thread until the block ends; fails if it does not start in 10 s."""
    thread = threading.Thread(target=uvicorn_server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uvicorn_server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the {what} did not start")
        time.sleep(0.01)
    try:
        yield thread
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=stop_timeout_s)


def wait_until(ready: Any, alive: Any, *, timeout_s: float, what: str, why_dead: Any = lambda: "",
               every_s: float = 0.1) -> None:
    """Poll `ready()` (a probe that may raise OSError: not listening yet) until it is true. `alive()` False
    (the process exited) fails with `why_dead()` (its log, say); so does running past `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        if not alive():
            raise AssertionError(f"{what} exited: {why_dead()}")
        try:
            if ready():
                return
        except OSError:
            pass
        assert time.monotonic() < deadline, f"{what} was not ready in {timeout_s:g} s"
        time.sleep(every_s)


def wait_healthy(base: str, alive: Any, *, timeout_s: float, why_dead: Any) -> None:
    """Poll `base`/health until it answers 200 (see wait_until)."""
    import httpx

    def healthy() -> bool:
        try:
            return httpx.get(base + "/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(healthy, alive, timeout_s=timeout_s, what=base, why_dead=why_dead)
