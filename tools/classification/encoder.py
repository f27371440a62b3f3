"""Text → sentence embeddings and segment rows: the `tokenizers` tokenizer plus an onnxruntime session.

Imports numpy, onnxruntime and tokenizers at module level, so import this module only from code
that runs after start-up (the stdio server's cold start must not pay for them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

from .segments import EncodedTexts, pool_text

MAX_POSITIONS = 512  # BERT's learned position table


def quiet_session_options(threads: int) -> onnxruntime.SessionOptions:
    # In stdio mode fd 1 carries the protocol: onnxruntime's C++ logger must stay below warnings.
    onnxruntime.set_default_logger_severity(3)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return options


def load_tokenizer(path: Path, max_tokens: int) -> Tokenizer:
    """The shipped tokenizer.json truncates and pads to 128; we truncate at max_tokens and pad only
    to the longest text in each batch, which keeps short queries cheap."""
    if not 2 < max_tokens <= MAX_POSITIONS:
        raise ValueError(f"max_tokens must be in 3..{MAX_POSITIONS}, got {max_tokens}")
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # no length: pad to the batch's longest
    return tokenizer


class SentenceEncoder:
    """Encodes texts into an `EncodedTexts`: sentence embeddings plus the classifier's segment rows.

    Not thread-safe by design: one worker thread owns it (batcher.py).
    """

    OUTPUTS = ("sentence_embedding", "last_layer_tokens", "mid_layer_tokens")

    def __init__(self, model: Path | bytes, tokenizer_path: Path, max_tokens: int, threads: int) -> None:
        self.tokenizer = load_tokenizer(tokenizer_path, max_tokens)
        source = str(model) if isinstance(model, Path) else model
        self.session = onnxruntime.InferenceSession(
            source, quiet_session_options(threads), providers=["CPUExecutionProvider"]
        )
        self.dimension = int(self.session.get_outputs()[0].shape[1])

    def tokenize(self, texts: list[str]) -> dict[str, np.ndarray]:
        encodings = self.tokenizer.encode_batch(texts)
        return {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        }

    def forward(self, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        """The bare onnxruntime pass: [sentence embeddings, last-layer tokens, mid-layer tokens]."""
        return self.session.run(self.OUTPUTS, feed)

    def encode_batch(self, texts: list[str]) -> EncodedTexts:
        feed = self.tokenize(texts)
        sentences, last, mid = self.forward(feed)
        lengths = feed["attention_mask"].sum(axis=1)
        rows = [pool_text(last[i], mid[i], int(lengths[i])) for i in range(len(texts))]
        return EncodedTexts.from_texts(sentences, rows)

    def encode(self, texts: list[str], batch_size: int = 32) -> EncodedTexts:
        """Long lists go in length-sorted batches so padding stays small; results keep the input order."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        sentences = np.zeros((len(texts), self.dimension), dtype=np.float32)
        rows: list[np.ndarray] = [np.empty(0)] * len(texts)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            encoded = self.encode_batch([texts[i] for i in chunk])
            for position, index in enumerate(chunk):
                sentences[index] = encoded.sentences[position]
                rows[index] = encoded.segments[encoded.offsets[position] : encoded.offsets[position + 1]]
        return EncodedTexts.from_texts(sentences, rows)
