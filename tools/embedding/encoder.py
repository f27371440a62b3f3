"""Text → sentence embeddings and segment rows: the `tokenizers` tokenizer plus an onnxruntime session,
opened over the cached model by `open_encoder` (the classifier's and the knowledge base's one way in).

Imports numpy, onnxruntime and tokenizers at module level, so import this module only from code
that runs after start-up (the stdio server's cold start must not pay for them).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnxruntime
import structlog
from tokenizers import Tokenizer

from . import model_cache
from .config import EncoderConfig
from .errors import ModelCacheError
from .model_files import ModelFiles
from .segments import EncodedTexts, pool_text
from .session_options import quiet_session_options

log = structlog.get_logger(__name__)

MAX_POSITIONS = 512  # BERT's learned position table


def load_tokenizer(path: Path, max_tokens: int) -> Tokenizer:
    """The shipped tokenizer.json truncates and pads to 128; we truncate at max_tokens and pad only
    to the longest text in each batch, which keeps short queries cheap."""
    if not 2 < max_tokens <= MAX_POSITIONS:
        raise ValueError(f"max_tokens must be in 3..{MAX_POSITIONS}, got {max_tokens}")
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # no length: pad to the batch's longest
    return tokenizer


# Part of the embedding cache's key: bump when the way texts become features changes.
# "single": every text runs in its own forward pass (see SentenceEncoder); "exact": int8 products are
# exact on every x86 CPU (session_options), so vectors cached on a CPU without VNNI are not reused.
ENCODING = "single-exact"


def features_key(model_id: str, weights_digest: str, converter: str, quantization: str, max_tokens: int) -> str:
    return f"{model_id}@{weights_digest[:16]}-c{converter}-{quantization}-t{max_tokens}-{ENCODING}"


class SentenceEncoder:
    """Encodes texts into an `EncodedTexts`: sentence embeddings plus the classifier's segment rows.

    `embed_one` and `encode` run every text in its own forward pass, never padded into a batch with
    others: int8 dynamic quantisation scales activations over the whole input tensor, so a batch-mate
    changed a text's features enough to flip its class. A text's features therefore depend on that text
    alone. `embed_many` shares passes, for the models under which that changes nothing (fp32, int8row).
    Thread-safe: onnxruntime sessions and `tokenizers` allow concurrent calls, and the inference pool
    runs one pass per worker thread.
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

    def tokenize_one(self, text: str) -> dict[str, np.ndarray]:
        """`tokenize([text])` without the batch machinery: the same ids, in a third of the time on long
        texts (a lone text has nothing to pad to)."""
        encoding = self.tokenizer.encode(text)
        return {
            "input_ids": np.array([encoding.ids], dtype=np.int64),
            "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
        }

    def embed_one(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """One text's sentence embedding (float32 [hidden]) and segment rows (float32 [segments, 2 * hidden])."""
        feed = self.tokenize_one(text)
        sentences, last, mid = self.forward(feed)
        return sentences[0], pool_text(last[0], mid[0], feed["input_ids"].shape[1])

    def embed_sentence(self, text: str) -> tuple[np.ndarray, int]:
        """`embed_one(text)[0]`, bit for bit, and the tokens the model read, without the segment rows a passage
        or a search query never reads (onnxruntime is asked for the pooled output alone). Tokenized through
        `encode_batch`, which lets go of the GIL while the Rust tokenizer runs (`encode` holds it for the whole
        text): background indexing calls this on two threads, and a request's event loop must not queue for
        the interpreter behind it."""
        (encoding,) = self.tokenizer.encode_batch([text])  # a batch of one pads to itself: embed_one's ids
        feed = {"input_ids": np.array([encoding.ids], dtype=np.int64),
                "attention_mask": np.array([encoding.attention_mask], dtype=np.int64)}
        return self.session.run(self.OUTPUTS[:1], feed)[0][0], len(encoding.ids)

    def embed_many(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """`embed_one`'s pair for each text, from shared forward passes: what a micro-batch of requests runs.

        Only batch-invariant where the model is: in fp32 and int8row a text's token states come out of a
        padded batch bit for bit as they do alone (the int8 model's dynamic activation scales span the
        batch, so there they do not; the classifier never batches int8). The sentence embedding is therefore pooled here
        from the text's own unpadded token states, not taken from the graph's pooled output, whose sum over
        the padded sequence rounds differently with the padding. Texts are grouped by length, so a long
        text does not make every short one pay for its padding."""
        # One `encode` per text, not `encode_batch`: a micro-batch is a few short texts, and handing them to
        # the tokenizer's thread pool cost twice the CPU of encoding them here (same ids either way).
        encodings = [self.tokenizer.encode(text) for text in texts]
        lengths = np.array([len(e.ids) for e in encodings], dtype=np.int64)
        ids = np.zeros((len(texts), int(lengths.max(initial=0))), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, : lengths[row]] = encoding.ids
        mask = (np.arange(ids.shape[1]) < lengths[:, None]).astype(np.int64)
        embedded: list[tuple[np.ndarray, np.ndarray]] = [None] * len(texts)  # type: ignore[list-item]
        for group in length_groups(lengths):
            width = int(lengths[group].max())
            _, last, mid = self.forward({"input_ids": ids[group, :width], "attention_mask": mask[group, :width]})
            for row, index in enumerate(group):
                length = int(lengths[index])
                embedded[index] = (pool_sentence(last[row, :length]), pool_text(last[row], mid[row], length))
        return embedded

    def encode(self, texts: list[str], workers: int = 1) -> EncodedTexts:
        """Each text alone (see the class docstring); `workers` threads share the list at start-up.
        The result does not depend on `workers`."""
        if workers > 1 and len(texts) > 1:
            with ThreadPoolExecutor(workers, thread_name_prefix="hexmcp-embed") as pool:
                embedded = list(pool.map(self.embed_one, texts))
        else:
            embedded = [self.embed_one(text) for text in texts]
        sentences = np.stack([s for s, _ in embedded]) if embedded else np.zeros((0, self.dimension))
        return EncodedTexts.from_texts(sentences, [rows for _, rows in embedded])


def pool_sentence(tokens: np.ndarray) -> np.ndarray:
    """Unit-length mean of one text's unpadded token states (float32 [hidden]), as the graph's pooled output
    computes it, but over this text's tokens alone."""
    mean = np.add.reduce(tokens, axis=0) / len(tokens)
    return (mean / max(math.sqrt(float(mean @ mean)), 1e-9)).astype(np.float32, copy=False)


# A group of a micro-batch pads to at most this multiple of its shortest text (plus a few tokens):
# attention costs grow with the padded length, so mixing 8- and 200-token texts would waste most of a pass.
GROUP_SPREAD = 1.5
GROUP_SLACK_TOKENS = 8
# Texts longer than this run one per pass: sharing a pass saves per-operator overhead, which only short
# texts are made of (int8row, CPU per text: 16 tokens 1.55 ms alone, ~1.1 ms in fours; 90-130 tokens no
# gain; 130-256 tokens 15 ms alone, 16-20 ms in fours and eights; bench/diaries/classification.md).
SOLO_TOKENS = 96


def length_groups(lengths: np.ndarray) -> list[np.ndarray]:
    """Indices of texts to run together: sorted by length, a new group whenever the length outgrows the
    group's shortest by GROUP_SPREAD (plus GROUP_SLACK_TOKENS), and a group of its own for every text
    longer than SOLO_TOKENS."""
    order = np.argsort(lengths, kind="stable")
    groups: list[list[int]] = []
    shortest = 0
    for index in order.tolist():
        if not groups or lengths[index] > SOLO_TOKENS or lengths[index] > shortest * GROUP_SPREAD + GROUP_SLACK_TOKENS:
            groups.append([])
            shortest = int(lengths[index])
        groups[-1].append(index)
    return [np.array(group, dtype=np.int64) for group in groups]


def open_encoder(files: ModelFiles, cache_dir: Path, digest: str, config: EncoderConfig) -> SentenceEncoder:
    """The encoder over the cached model. Cached bytes that match their checksum but that onnxruntime
    rejects (a sidecar rewritten over a damaged file, a file from an incompatible build) are discarded
    and rebuilt once; a second refusal is an error worth stopping for."""
    for attempt in (1, 2):
        model_path = model_cache.load_or_build(files, cache_dir, config.quantization, digest)
        try:
            return SentenceEncoder(model_path, files.tokenizer, config.max_tokens, config.threads)
        except Exception as exc:
            if attempt == 2:
                raise ModelCacheError(f"onnxruntime cannot load {model_path}: {exc}") from exc
            log.warning("cached model does not load; rebuilding it", path=str(model_path), error=str(exc))
            model_cache.discard(cache_dir, digest, config.quantization)
    raise AssertionError("unreachable")
