"""A cache directory after one real first start, for tests about what a later start does: they then do
not depend on whether this machine's own cache (~/.cache/hexmcp) happens to be warm."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import attrs


@attrs.frozen
class WarmCache:
    path: Path
    first_start_log: str  # what the first start wrote to stderr (JSON lines, at info)


def first_start(path: Path) -> WarmCache:
    """`hexmcp stdio` on an empty input with HEXMCP_CACHE_DIR=`path`: it converts the model into it (and
    writes the compiled start-up code), as any earlier start on a machine does."""
    out = subprocess.run([sys.executable, "-m", "hexmcp.app.cli", "stdio", "--no-knowledge", "--log-level", "info"],
                         input=b"", capture_output=True, timeout=300, check=False,
                         env={**os.environ, "HEXMCP_CACHE_DIR": str(path)})
    assert out.returncode == 0 and out.stdout == b"", out.stderr.decode()
    return WarmCache(path=path, first_start_log=out.stderr.decode())
