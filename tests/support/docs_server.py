"""A real `hexmcp serve` over a --docs corpus, for the transport tests of the tools that read it: started
with its own cache directory, ready once /health says the knowledge index is complete."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import httpx

from .net import free_port, wait_until


def docs_env(cache: Path) -> dict[str, str]:
    return {**os.environ, "HEXMCP_CACHE_DIR": str(cache)}


@contextlib.contextmanager
def serve_docs(corpus: Path, cache: Path, *extra: str, timeout: float = 90) -> Iterator[str]:
    """Yields the server's base URL (http://127.0.0.1:PORT); stops it afterwards."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "hexmcp.app.cli", "serve", "--no-classifier", "--port",
                                str(port), "--docs", str(corpus), "--log-level", "warning", *extra],
                               env=docs_env(cache), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    # /health shows its details (the index's progress) only to an authenticated caller (ADR 1101).
    token = extra[extra.index("--auth-token") + 1] if "--auth-token" in extra else None
    headers = {"authorization": f"Bearer {token}"} if token else {}

    def indexed() -> bool:
        try:
            return httpx.get(base + "/health", headers=headers).json()["knowledge"]["complete"]
        except httpx.HTTPError:
            return False

    try:
        wait_until(indexed, lambda: process.poll() is None, timeout_s=timeout, what="hexmcp serve", every_s=0.2,
                   why_dead=lambda: process.stderr.read().decode(errors="replace")[-2000:])  # type: ignore[union-attr]
        yield base
    finally:
        process.terminate()
        process.wait(timeout=20)
