"""Facts about the Python environment hexmcp runs in, for the fixes its error lines suggest."""

from __future__ import annotations

import sys
from pathlib import Path


CLIENT_MODULES = ("aiohttp", "httpx_sse", "tenacity")
"""What the `client` extra installs: hexmcp's MCP client (the client commands, --upstream, the gateway)."""


def pip_command() -> str:
    """The pip of the interpreter running us, so a suggested install goes into this environment."""
    beside = Path(sys.executable).with_name("pip")
    return str(beside) if beside.is_file() else f"{sys.executable} -m pip"
