"""Example embeddings on disk, so a restart with an unchanged taxonomy skips the encoder.

Key = sha256(model key + every text, in order). A file that fails to load, or whose shape or values
are wrong, is recomputed and rewritten atomically.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from pathlib import Path

import numpy as np
import structlog

from .model_cache import atomic_write_bytes

log = structlog.get_logger(__name__)


def cache_key(model_key: str, texts: list[str]) -> str:
    digest = hashlib.sha256(model_key.encode("utf-8"))
    for text in texts:
        digest.update(b"\x00")
        digest.update(text.encode("utf-8"))
    return digest.hexdigest()


def load_or_compute(
    cache_dir: Path,
    model_key: str,
    texts: list[str],
    width: int,
    compute: Callable[[list[str]], np.ndarray],
) -> np.ndarray:
    path = cache_dir / "embeddings" / f"{cache_key(model_key, texts)}.npy"
    cached = _load(path, (len(texts), width))
    if cached is not None:
        return cached
    embeddings = np.asarray(compute(texts), dtype=np.float32)
    buffer = io.BytesIO()
    np.save(buffer, embeddings, allow_pickle=False)
    try:
        atomic_write_bytes(path, buffer.getvalue())
    except OSError as exc:  # a read-only cache costs speed, not correctness
        log.warning("cannot write embedding cache", path=str(path), error=str(exc))
    return embeddings


def _load(path: Path, shape: tuple[int, int]) -> np.ndarray | None:
    try:
        array = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("embedding cache unreadable; recomputing", path=str(path), error=str(exc))
        return None
    if array.shape != shape or array.dtype != np.float32 or not np.isfinite(array).all():
        log.warning("embedding cache has unexpected content; recomputing", path=str(path))
        return None
    return array
