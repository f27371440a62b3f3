"""A one-module tool pack installed by hand for a `hexmcp` subprocess: the module and a .dist-info folder
declaring its `hexmcp.packs` entry point, in a folder the test puts on PYTHONPATH (no pip, the project's
venv untouched), and a cache folder of its own so the pack scan sees it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def pack_environment(folder: Path, module: Path, pack: str, attribute: str) -> dict[str, str]:
    """The environment of a `hexmcp` that finds `module`'s `attribute` as the tool pack named `pack`."""
    site, cache = folder / "site", folder / "cache"
    site.mkdir()
    cache.mkdir()
    shutil.copy(module, site / module.name)
    info = site / f"{module.stem}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.stem.replace('_', '-')}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[hexmcp.packs]\n{pack} = {module.stem}:{attribute}\n")
    return {**os.environ, "PYTHONPATH": str(site), "HEXMCP_CACHE_DIR": str(cache), "HEXMCP_LOG_LEVEL": "warning"}
