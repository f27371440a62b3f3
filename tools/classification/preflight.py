"""Start-up checks for the model, run before a server accepts traffic.

Everything here can fail because of the machine rather than the request: a model package that is not
installed, a cache directory that cannot be written, a conversion that cannot run. Doing it first lets
the command say so in one line and exit, instead of serving a classifier that can never load.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hexmcp.tools.cache_dir import default_cache_dir, untrusted_reason
from hexmcp.tools.embedding import model_cache
from hexmcp.tools.embedding.model_files import locate_model_files, memoised_sha256

from .config import ClassificationConfig
from .errors import CacheDirError

CACHE_SUBDIRS = ("models", "embeddings")


def cache_dir_of(config: ClassificationConfig) -> Path:
    return Path(config.cache_dir) if config.cache_dir else default_cache_dir()


def check_cache_dir(cache_dir: Path) -> None:
    """Creates the cache's directories and proves each writable by creating a file in it; raises
    CacheDirError. A write test, not os.access: under root, permission bits say nothing. A directory
    another user controls is refused first (cache_dir.untrusted_reason): what is read from it decides what runs."""
    untrusted = untrusted_reason(cache_dir)
    if untrusted is not None:
        raise CacheDirError(cache_dir, untrusted)
    for name in CACHE_SUBDIRS:
        folder = cache_dir / name
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(dir=folder, prefix=".write-test-")
            os.close(fd)
            os.unlink(probe)
            os.listdir(folder)
        except OSError as exc:
            raise CacheDirError(cache_dir, exc.strerror or str(exc)) from exc


def prepare_model(config: ClassificationConfig) -> Path:
    """The verified ONNX model in the cache, converted first if needed (minutes on a first run, one
    checksum after). Raises ModelFilesError, CacheDirError or ModelCacheError."""
    files = locate_model_files()
    cache_dir = cache_dir_of(config)
    check_cache_dir(cache_dir)
    return model_cache.load_or_build(files, cache_dir, config.quantization,
                                     memoised_sha256(files.weights, cache_dir / "models"))
