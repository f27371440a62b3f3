"""Text → unit-length sentence embeddings: the `tokenizers` tokenizer plus an onnxruntime session.

Imports numpy, onnxruntime and tokenizers at module level, so import this module only from code
that runs after start-up (the stdio server's cold start must not pay for them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

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
    """Encodes texts into feature rows [sentence_embedding | mid_layer_embedding], each half unit-length.

    The first `dimension` columns are the model's sentence embedding (used for similarity); the whole
    row feeds the classifier head. Not thread-safe by design: one worker thread owns it (batcher.py).
    """

    OUTPUTS = ("sentence_embedding", "mid_layer_embedding")

    def __init__(self, model: Path | bytes, tokenizer_path: Path, max_tokens: int, threads: int) -> None:
        self.tokenizer = load_tokenizer(tokenizer_path, max_tokens)
        source = str(model) if isinstance(model, Path) else model
        self.session = onnxruntime.InferenceSession(
            source, quiet_session_options(threads), providers=["CPUExecutionProvider"]
        )
        self.dimension = int(self.session.get_outputs()[0].shape[1])
        self.width = self.dimension * len(self.OUTPUTS)

    def tokenize(self, texts: list[str]) -> dict[str, np.ndarray]:
        encodings = self.tokenizer.encode_batch(texts)
        return {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        }

    def forward(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        return np.hstack(self.session.run(self.OUTPUTS, feed))

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """float32 [len(texts), width]. Long lists go in length-sorted batches so padding stays small."""
        if not texts:
            return np.zeros((0, self.width), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.width), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            out[chunk] = self.forward(self.tokenize([texts[i] for i in chunk]))
        return out
