"""Passage and query vectors from the classification tools' MiniLM encoder: the same bundled
weights, the same ONNX cache, the same offline rule (nothing is ever downloaded).

Imports numpy and onnxruntime lazily (through the classification encoder), so importing the
knowledge package stays cheap for the stdio cold start.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

PASSAGE_MAX_TOKENS = 256  # MiniLM-L6's trained window; longer passages are truncated by the tokenizer


class PassageEmbedder:
    """Thread-safe: the encoder's onnxruntime session and tokenizer allow concurrent calls."""

    def __init__(self, encoder: Any, model_key: str) -> None:
        self.encoder = encoder
        self.dimension: int = encoder.dimension
        self.model_key = model_key  # part of every on-disk cache key: a new model re-embeds
        self.embedded = 0  # texts embedded since start-up (tests count re-embedding with it)

    @classmethod
    def load(cls, *, quantization: str = "int8", threads: int = 1, cache_dir: Path | None = None) -> PassageEmbedder:
        from hexmcp.tools.classification import model_cache
        from hexmcp.tools.classification.encoder import SentenceEncoder, features_key
        from hexmcp.tools.classification.model_files import MODEL_ID, file_sha256, locate_model_files
        from hexmcp.tools.classification.converter_version import CONVERTER_VERSION

        cache = cache_dir or model_cache.default_cache_dir()
        files = locate_model_files()
        digest = file_sha256(files.weights)
        model_path = model_cache.load_or_build(files, cache, quantization, digest)
        encoder = SentenceEncoder(model_path, files.tokenizer, PASSAGE_MAX_TOKENS, threads)
        return cls(encoder, features_key(MODEL_ID, digest, CONVERTER_VERSION, quantization, PASSAGE_MAX_TOKENS))

    def embed(self, text: str) -> np.ndarray:
        """One L2-normalised float32 vector; each text runs alone (see SentenceEncoder on why)."""
        vector, _rows = self.encoder.embed_one(text)
        self.embedded += 1
        vector = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector

    def embed_many(self, texts: list[str]) -> np.ndarray:
        """Each text alone, on one worker thread per core (the result does not depend on how many)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = np.asarray(self.encoder.encode(texts, os.cpu_count() or 1).sentences, dtype=np.float32)
        self.embedded += len(texts)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)
