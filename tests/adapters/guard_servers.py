"""`hexmcp serve` and `hexmcp stdio` as real processes with the guard flags, for the rate-limit and audit tests.

No classifier and no knowledge base: the gateway's tools (`listModels`, `routeCompletion`) are there
anyway and answer at once (a tool error: no gateway configured), which is all a limit or an audit needs.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
import time
from typing import Iterator

import httpx

from ..support.net import free_port
from ..support.wire import REPO_ROOT

HEXMCP = [sys.executable, "-m", "hexmcp.adapters.cli"]
BARE = ["--no-classifier", "--no-knowledge"]
CHEAP_TOOL = "listModels"
OTHER_TOOL = "routeCompletion"


def stdio_command(*flags: str) -> list[str]:
    return [*HEXMCP, "stdio", *BARE, *flags]


@contextlib.contextmanager
def serve(*flags: str) -> Iterator[str]:
    """A `hexmcp serve` on a free port; yields its base URL once /health answers."""
    port = free_port()
    # The log goes to a file: a pipe nobody reads fills up under a flood and stalls the server.
    log = tempfile.TemporaryFile()
    process = subprocess.Popen([*HEXMCP, "serve", *BARE, "--port", str(port), *flags], cwd=REPO_ROOT,
                               stdout=subprocess.DEVNULL, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                log.seek(0)
                raise AssertionError(f"hexmcp serve exited: {log.read().decode(errors='replace')}")
            try:
                if httpx.get(base + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "hexmcp serve did not become healthy"
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
