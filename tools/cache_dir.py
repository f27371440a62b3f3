"""Where hexmcp keeps what it builds once per machine: `$HEXMCP_CACHE_DIR`, default `~/.cache/hexmcp`.

The model cache, the knowledge index and the command's compiled start-up code live under it.
A module of its own so that the command can find it before any tool module is imported.
"""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    configured = os.environ.get("HEXMCP_CACHE_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "hexmcp"
