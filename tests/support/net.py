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
