"""Facts about the Python environment hexmcp runs in, for the fixes its error lines suggest."""

from __future__ import annotations

import sys
from pathlib import Path


def pip_command() -> str:
    """The pip of the interpreter running us, so a suggested install goes into this environment."""
    beside = Path(sys.executable).with_name("pip")
    return str(beside) if beside.is_file() else f"{sys.executable} -m pip"
