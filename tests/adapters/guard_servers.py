"""`hexmcp serve` and `hexmcp stdio` as real processes with the guard flags, for the rate-limit and audit tests.

No classifier and no knowledge base: the gateway's tools (`listModels`, `routeCompletion`) are there
anyway and answer at once (a tool error: no gateway configured), which is all a limit or an audit needs.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
from typing import Iterator

from ..support.net import free_port, wait_healthy
from ..support.wire import REPO_ROOT

HEXMCP = [sys.executable, "-m", "hexmcp.app.cli"]
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
        wait_healthy(base, lambda: process.poll() is None, timeout_s=30,
                     why_dead=lambda: (log.seek(0), log.read().decode(errors="replace"))[1])
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
