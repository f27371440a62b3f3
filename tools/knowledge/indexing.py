"""`hexmcp index`: build the passage-vector cache ahead of time, with progress and an ETA, and a summary.

Work is saved per document as it completes (builder.VectorCache), so an interrupted run loses at
most the document it was embedding, and the next run, or a server start, resumes from there.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, TextIO

import attrs

from .builder import build_index, new_store
from .chunking import DEFAULT_MAX_CHARS, chunk_document
from .corpus import CorpusSpec, load_documents
from .embedder import PASSAGE_MAX_TOKENS, PassageEmbedder
from .index_progress import IndexProgress
from .windows import passage_windows


@attrs.frozen(kw_only=True)
class IndexSummary:
    documents: int
    passages: int
    embedded: int  # passages embedded by this run (the rest came from the cache)
    tokens: int  # the tokens the encoder reads for every passage, each window of a long one (windows.py)
    seconds: float
    version: str

    @property
    def passages_per_second(self) -> float:
        return self.passages / self.seconds if self.seconds > 0 else 0.0

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    def line(self) -> str:
        return (f"{self.documents} documents, {self.passages} passages ({self.embedded} embedded, "
                f"{self.passages - self.embedded} cached), {self.tokens} tokens, {self.seconds:.1f} s, "
                f"{self.passages_per_second:.1f} passages/s, {self.tokens_per_second:.0f} tokens/s, "
                f"index {self.version}")


#: Texts tokenized at once for the summary's token count: tokenizers keeps every encoding of a batch (ids,
#: offsets, masks) alive together, which for a whole 100,000-passage corpus is hundreds of megabytes.
TOKEN_COUNT_BATCH = 1024


def count_tokens(tokenizer: Any, texts: list[str]) -> int:
    """Tokens the encoder reads (after truncation), padding not counted: the shared tokenizer pads a batch
    to its longest text, so len(ids) would count every short passage as long as the longest."""
    return sum(sum(encoding.attention_mask) for start in range(0, len(texts), TOKEN_COUNT_BATCH)
               for encoding in tokenizer.encode_batch(texts[start : start + TOKEN_COUNT_BATCH]))


def index_corpus(spec: CorpusSpec, *, cache_dir: Path, quantization: str = "int8",
                 progress_stream: TextIO | None = None, embedder: PassageEmbedder | None = None) -> IndexSummary:
    """With `progress_stream` (stderr, say), progress lines with the rate and the ETA are written to it.
    `embedder`: one already loaded (a bench reuses it across rounds); by default the model is opened here."""
    started = time.perf_counter()
    documents = load_documents(spec)
    passages = [p for d in documents for p in chunk_document(d, DEFAULT_MAX_CHARS)]
    embedder = embedder or PassageEmbedder.load(quantization=quantization, cache_dir=cache_dir)
    embedded_before, tokens_before = embedder.embedded, embedder.embedded_tokens
    progress = IndexProgress(len(passages), progress_stream) if progress_stream is not None else None
    try:
        index = build_index(documents, embedder, new_store(embedder.dimension), cache_dir=cache_dir,
                            progress=(lambda done: progress.advance(done, embedder.embedded - embedded_before))
                            if progress else None)
    finally:
        if progress is not None:
            progress.close()
    embedded = embedder.embedded - embedded_before
    if embedded == len(passages):  # counted while embedding: no second tokenization of the corpus
        tokens = embedder.embedded_tokens - tokens_before
    else:  # some came from the cache, never tokenized by this run
        texts = [t for p in passages for t in passage_windows(p, embedder.token_offsets, PASSAGE_MAX_TOKENS)]
        tokens = count_tokens(embedder.encoder.tokenizer, texts)
    return IndexSummary(documents=len(documents), passages=len(index.passages), embedded=embedded,
                        tokens=tokens, seconds=time.perf_counter() - started, version=index.version)
