"""`hexmcp serve` as a real subprocess on a free port, for the drain, worker and deployment tests."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
from typing import IO, Iterator

import httpx

from .net import free_port

DEMO_UPSTREAM = f"demo=stdio:{shlex.join([sys.executable, '-m', 'tests.fixtures.demo_server'])}"
"""An `--upstream` that mounts the demo server's tools as demo__*: `demo__slow` is a request that takes
as long as asked, which is what a drain test needs in flight."""
LIGHT = ("--no-classifier", "--no-knowledge")


class ServeProcess:
    def __init__(self, process: subprocess.Popen[bytes], port: int) -> None:
        self.process = process
        self.port = port
        self.base = f"http://127.0.0.1:{port}"

    def health(self) -> httpx.Response:
        return httpx.get(f"{self.base}/health", timeout=5)

    def wait_healthy(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            assert self.process.poll() is None, f"the server exited with {self.process.returncode}"
            with contextlib.suppress(httpx.TransportError):
                if self.health().status_code == 200:
                    return
            assert time.monotonic() < deadline, "the server did not become healthy"
            time.sleep(0.1)

    def wait_for_tool(self, name: str, timeout_s: float = 30.0) -> None:
        """Until `name` is listed (an upstream mounts its tools in the background)."""
        deadline = time.monotonic() + timeout_s
        while name not in [tool["name"] for tool in httpx.post(f"{self.base}/mcp/tools/list", json={},
                                                                timeout=5).json()["tools"]]:
            assert time.monotonic() < deadline, f"{name} never appeared"
            time.sleep(0.1)

    def terminate(self, timeout_s: float = 30.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout_s)


@contextlib.contextmanager
def serve_process(*flags: str, port: int | None = None, env: dict[str, str] | None = None,
                  healthy: bool = True, stderr: IO[bytes] | None = None) -> Iterator[ServeProcess]:
    """`hexmcp serve FLAGS --port P`, healthy when the block starts (unless `healthy=False`), killed if still
    running when it ends. stderr goes to the test's own (pytest shows it when the test fails), or to `stderr`."""
    port = port or free_port()
    with http_process([sys.executable, "-m", "hexmcp.app.cli", "serve", *flags, "--port", str(port)], port,
                      env=env, healthy=healthy, stderr=stderr) as served:
        yield served


@contextlib.contextmanager
def http_process(argv: list[str], port: int, *, env: dict[str, str] | None = None, healthy: bool = True,
                 stderr: IO[bytes] | None = None) -> Iterator[ServeProcess]:
    """Any command serving hexmcp's HTTP app on `port` (a user's own server file, say), as `serve_process`."""
    # A process group of its own: with `--workers N` the supervisor's workers are its children, and killing
    # the supervisor alone would leave them serving after the test (holding its port and two cores' memory).
    process = subprocess.Popen(argv, env={**os.environ, "HEXMCP_LOG_LEVEL": "warning", **(env or {})},
                               stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    served = ServeProcess(process, port)
    try:
        if healthy:
            served.wait_healthy()
        yield served
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the group outlives a supervisor that already exited
        process.wait()
