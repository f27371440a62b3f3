"""Encoded examples on disk, so a restart with an unchanged taxonomy skips the encoder.

Key = sha256(model key + every text, in order). One .npz per list of texts holds its sentence
embeddings, segment rows and offsets. A file that fails to load, or whose shapes or values are
wrong, is recomputed and rewritten atomically.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import structlog

from hexmcp.tools.embedding.model_cache import atomic_write_bytes
from hexmcp.tools.embedding.segments import EncodedTexts

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
    hidden: int,
    compute: Callable[[list[str]], EncodedTexts],
) -> EncodedTexts:
    path = cache_dir / "embeddings" / f"{cache_key(model_key, texts)}.npz"
    cached = _load(path, len(texts), hidden)
    if cached is not None:
        return cached
    encoded = compute(texts)
    buffer = io.BytesIO()
    np.savez(buffer, sentences=encoded.sentences, segments=encoded.segments, offsets=encoded.offsets)
    try:
        atomic_write_bytes(path, buffer.getvalue())
    except OSError as exc:  # a read-only cache costs speed, not correctness
        log.warning("cannot write embedding cache", path=str(path), error=str(exc))
    return encoded


def _load(path: Path, texts: int, hidden: int) -> EncodedTexts | None:
    try:
        with np.load(path, allow_pickle=False) as archive:
            encoded = EncodedTexts(
                sentences=archive["sentences"], segments=archive["segments"], offsets=archive["offsets"]
            )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        log.warning("embedding cache unreadable; recomputing", path=str(path), error=str(exc))
        return None
    dtypes_ok = (
        encoded.sentences.dtype == np.float32
        and encoded.segments.dtype == np.float32
        and encoded.offsets.dtype == np.int64
    )
    if not dtypes_ok or not encoded.is_consistent(texts, hidden):
        log.warning("embedding cache has unexpected content; recomputing", path=str(path))
        return None
    return encoded
