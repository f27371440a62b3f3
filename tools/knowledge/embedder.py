"""Passage and query vectors from the shared MiniLM encoder (hexmcp.tools.embedding), the classifier's
too: the same bundled weights, the same ONNX cache, the same offline rule (nothing is ever downloaded).

Imports numpy and onnxruntime lazily (through the shared encoder), so importing the knowledge package
stays cheap for the stdio cold start.

Passages (indexing, concept extraction) are background work: each pass first lets queued foreground
passes go, and leaves a core free while requests keep coming (foreground_gate.py). A query
embedded for a search is foreground, unless a background thread asks for it (a concept build).
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from hexmcp.tools.embedding.background_thread import in_background, pass_thread
from hexmcp.tools.embedding.foreground_gate import FOREGROUND

PASSAGE_MAX_TOKENS = 256  # MiniLM-L6's trained window; longer passages are truncated by the tokenizer


class PassageEmbedder:
    """Thread-safe: the encoder's onnxruntime session and tokenizer allow concurrent calls."""

    def __init__(self, encoder: Any, model_key: str) -> None:
        self.encoder = encoder
        self.dimension: int = encoder.dimension
        self.model_key = model_key  # part of every on-disk cache key: a new model re-embeds
        self.embedded = 0  # passages (or texts) embedded since start-up (tests count re-embedding with it)
        self.embedded_tokens = 0  # the tokens the model read for them (passages through submit_many only)
        self._pool: ThreadPoolExecutor | None = None  # made on the first submit_many: queries never need it
        self._plain_tokenizer: Any = None  # made on the first token_offsets: the encoder's, untruncated

    @classmethod
    def load(cls, *, quantization: str = "int8", threads: int = 1, cache_dir: Path | None = None) -> PassageEmbedder:
        from hexmcp.tools.cache_dir import default_cache_dir
        from hexmcp.tools.embedding.config import EncoderConfig
        from hexmcp.tools.embedding.converter_version import CONVERTER_VERSION
        from hexmcp.tools.embedding.encoder import features_key, open_encoder
        from hexmcp.tools.embedding.model_files import MODEL_ID, locate_model_files, memoised_sha256

        cache = cache_dir or default_cache_dir()
        files = locate_model_files()
        digest = memoised_sha256(files.weights, cache / "models")
        # The classifier's way in too: a cached model onnxruntime refuses is rebuilt once, then an error.
        config = EncoderConfig(quantization=quantization, threads=threads, max_tokens=PASSAGE_MAX_TOKENS)
        encoder = open_encoder(files, cache, digest, config)
        return cls(encoder, features_key(MODEL_ID, digest, CONVERTER_VERSION, quantization, PASSAGE_MAX_TOKENS))

    def embed(self, text: str) -> np.ndarray:
        """One L2-normalised float32 vector; each text runs alone (see SentenceEncoder on why)."""
        if in_background():
            vector, _ = self.encoder.embed_sentence(text)
        else:
            with FOREGROUND.foreground():
                vector, _ = self.encoder.embed_sentence(text)
        self.embedded += 1
        vector = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector

    def embed_many(self, texts: list[str]) -> np.ndarray:
        """Each text alone, on one worker thread per core (the result does not depend on how many)."""
        return self.submit_many(texts).result()

    def submit_many(self, texts: list[str], *, passages: int | None = None) -> PendingVectors:
        """Queue `texts` on the embedder's worker threads and return at once. The queue is shared, so
        texts of several calls in flight keep every worker busy (a document of one passage would idle
        all but one); each text still runs alone, so a vector never depends on what it queued with.
        `passages`: how many passages the texts are the windows of (what `embedded` counts; default: one each)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="hexmcp-embed",
                                            initializer=pass_thread)
        return PendingVectors(self, [self._pool.submit(self._embed_after_foreground, text) for text in texts],
                              len(texts) if passages is None else passages)

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """`text`'s tokens as character offsets, untruncated, special tokens left out: where a passage's
        windows start and end (windows.py)."""
        if self._plain_tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_str(self.encoder.tokenizer.to_str())
            tokenizer.no_truncation()
            tokenizer.no_padding()
            self._plain_tokenizer = tokenizer
        (encoding,) = self._plain_tokenizer.encode_batch([text], add_special_tokens=False)  # lets go of the GIL
        return encoding.offsets

    def _embed_after_foreground(self, text: str) -> tuple[np.ndarray, int]:
        # The sentence vector alone: the classifier's segment rows are nothing a passage needs. Its token count
        # comes with it, so a summary need not tokenize every passage a second time to report tokens/s.
        with FOREGROUND.background_pass():  # waits for the foreground, keeps a core free for it (foreground_gate.py)
            return self.encoder.embed_sentence(text)

    def _finish(self, vectors: np.ndarray, tokens: int, passages: int) -> np.ndarray:
        self.embedded += passages
        self.embedded_tokens += tokens
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)


class PendingVectors:
    """The vectors of one `submit_many` call, once every text of it is embedded."""

    def __init__(self, embedder: PassageEmbedder, parts: list[Future[Any]], passages: int) -> None:
        self._embedder, self._parts, self._passages = embedder, parts, passages

    def result(self) -> np.ndarray:
        """(len(texts), dimension) float32, L2-normalised; waits for the texts still queued."""
        if not self._parts:
            return np.zeros((0, self._embedder.dimension), dtype=np.float32)
        embedded = [part.result() for part in self._parts]
        vectors = np.stack([np.asarray(vector, dtype=np.float32) for vector, _ in embedded])
        return self._embedder._finish(vectors, sum(tokens for _, tokens in embedded), self._passages)
