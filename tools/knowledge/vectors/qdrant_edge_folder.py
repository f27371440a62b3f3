"""What a folder must be for the Qdrant Edge store, checked without importing Qdrant Edge or numpy.

The spec check at start-up (factory.py) and the store's open (qdrant_edge.py) both refuse the same
folders with the same words: one holding files that are not an Edge shard (another tool's, or
qdrant-client's local mode), or a shard of vectors of another dimension.
"""

from __future__ import annotations

import json
from pathlib import Path

#: Edge's file naming the shard's configuration: its presence is what makes a folder an Edge shard.
CONFIG_FILE = "edge_config.json"
MISSING_PACKAGE = "the Qdrant Edge store needs qdrant-edge-py: pip install 'hexmcp[qdrant-edge]'"


def shard_problem(folder: Path, dimension: int | None = None) -> str | None:
    """Why `folder` cannot hold this store's shard, or None: it holds files but no Edge shard, or a
    shard of vectors of another dimension (`dimension` None skips that check)."""
    if not folder.is_dir():
        return None  # made on open; the factory checks that its parent can be written
    config_file = folder / CONFIG_FILE
    if not config_file.is_file():
        if any(folder.iterdir()):
            return f"{folder} holds files but no Qdrant Edge shard (no {CONFIG_FILE}); give an empty or new folder"
        return None
    try:
        vectors = json.loads(config_file.read_text()).get("vectors", {})
    except (OSError, ValueError) as error:
        return f"{config_file} is unreadable: {error}"
    size = vectors.get("", {}).get("size") if isinstance(vectors, dict) else None
    if size is None:
        return f"the Qdrant Edge shard in {folder} has no unnamed dense vector (not one hexmcp made)"
    if dimension is not None and size != dimension:
        return f"the Qdrant Edge shard in {folder} holds vectors of dimension {size}, the embedding model makes {dimension}"
    return None
