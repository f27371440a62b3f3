"""Loopback helpers for tests that run a real server: a free port, and uvicorn in a thread."""

from __future__ import annotations

import contextlib
import itertools
import random
import socket
import threading
import time
from typing import Any, Iterator


def free_port() -> int:
    """A port nobody is bound to, from below the kernel's ephemeral range. A port the kernel hands out for
    a bind to 0 comes from that range, where any outgoing connection on the machine may take it as its
    source port between now and the server's own bind, which then fails with "address already in use"
    (seen in CI on a 0.0.0.0 bind, while other processes made connections). Below the range only another
    explicit bind can collide, and the candidates start at a random place."""
    low = _ephemeral_low()
    if low - _FIRST_PORT >= 1000:
        for _ in range(200):
            port = _FIRST_PORT + next(_candidates) % (low - _FIRST_PORT)
            if _bindable(port):
                return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_FIRST_PORT = 10000
_candidates = itertools.count(random.randrange(1 << 20))


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as handle:
            return int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("0.0.0.0", port))  # a bind on every address also rules out one on loopback
        except OSError:
            return False
    return True


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
