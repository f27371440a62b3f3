"""A real `hexmcp serve` over a --docs corpus, for the transport tests of the tools that read it: started
with its own cache directory, ready once /health says the knowledge index is complete."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import httpx

from .net import free_port


def docs_env(cache: Path) -> dict[str, str]:
    return {**os.environ, "HEXMCP_CACHE_DIR": str(cache)}


@contextlib.contextmanager
def serve_docs(corpus: Path, cache: Path, *extra: str, timeout: float = 90) -> Iterator[str]:
    """Yields the server's base URL (http://127.0.0.1:PORT); stops it afterwards."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "hexmcp.adapters.cli", "serve", "--no-classifier", "--port",
                                str(port), "--docs", str(corpus), "--log-level", "warning", *extra],
                               env=docs_env(cache), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                if httpx.get(base + "/health").json()["knowledge"]["complete"]:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=20)
