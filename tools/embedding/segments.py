"""Segment pooling: a text becomes one feature row per run of about SEGMENT_TOKENS tokens.

Each row is [last layer | layer MID_LAYER], each half the L2-normalised mean of the segment's token
states (the [CLS] and [SEP] markers belong to no segment). The head is trained on segment rows, each
text's rows weighted to sum to one, and reads a text through the mean of its rows.

Why segments: a 200-token exam question pooled into one vector is a single training point; cut into
segments of ~16 tokens it gives the head several views of the same topic, which regularises it the
way more examples would. Cross-validation on the training rows favours it over
whole-text pooling, and the exact segment length matters little. Texts shorter than
1.5 segments stay one segment, so short prompts are pooled whole.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs
import numpy as np

SEGMENT_TOKENS = 16


def segment_count(n_tokens: int) -> int:
    """n_tokens / SEGMENT_TOKENS rounded half up, at least 1."""
    return max(1, (n_tokens + SEGMENT_TOKENS // 2) // SEGMENT_TOKENS)


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))[:, None]
    return rows / np.maximum(norms, 1e-12)


def pool_text(last: np.ndarray, mid: np.ndarray, length: int) -> np.ndarray:
    """Segment rows (float32 [segments, 2 * hidden]) of one text's unpadded token states."""
    # Without [CLS] and [SEP] when there is anything between them.
    start, stop = (1, length - 1) if length > 2 else (0, length)
    n = stop - start
    count = segment_count(n)
    if count == 1:  # most queries: the fewest numpy calls (this runs on every request, cache-cold)
        # add.reduce / n is what ndarray.mean computes, bit for bit, without its Python-level wrapper.
        a, b = np.add.reduce(last[start:stop], axis=0) / n, np.add.reduce(mid[start:stop], axis=0) / n
        row = np.concatenate((a / max(math.sqrt(float(a @ a)), 1e-12), b / max(math.sqrt(float(b @ b)), 1e-12)))
        return row[None].astype(np.float32, copy=False)
    edges = (np.arange(count) * n) // count
    sizes = np.diff(edges, append=n)[:, None]
    halves = [np.add.reduceat(layer[start:stop], edges, axis=0) / sizes for layer in (last, mid)]
    return np.hstack([_unit(h) for h in halves]).astype(np.float32, copy=False)


@attrs.frozen(kw_only=True, eq=False)
class EncodedTexts:
    """What the encoder makes of a list of texts, in the order given."""

    sentences: np.ndarray  # float32 [texts, hidden]: unit-length sentence embeddings, for similarity
    segments: np.ndarray  # float32 [segments, 2 * hidden]: every text's segment rows, text by text
    offsets: np.ndarray  # int64 [texts + 1]: text i owns segments[offsets[i] : offsets[i + 1]]

    def __len__(self) -> int:
        return len(self.sentences)

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.offsets)

    def owners(self) -> np.ndarray:
        """Index of the text each segment row belongs to."""
        return np.repeat(np.arange(len(self)), self.counts)

    def text_features(self) -> np.ndarray:
        """float64 [texts, 2 * hidden]: the mean of each text's segment rows, what the head reads."""
        if len(self.segments) == len(self):  # one segment per text, as for most queries
            return self.segments.astype(np.float64)
        sums = np.add.reduceat(self.segments.astype(np.float64), self.offsets[:-1], axis=0)
        return sums / self.counts[:, None]

    def is_consistent(self, texts: int, hidden: int) -> bool:
        o = self.offsets
        return (
            self.sentences.shape == (texts, hidden)
            and self.segments.ndim == 2
            and self.segments.shape[1] == 2 * hidden
            and o.shape == (texts + 1,)
            and o[0] == 0
            and o[-1] == len(self.segments)
            and bool(np.all(np.diff(o) >= 1))
            and bool(np.isfinite(self.sentences).all() and np.isfinite(self.segments).all())
        )

    @classmethod
    def from_texts(cls, sentences: np.ndarray, rows: Sequence[np.ndarray]) -> EncodedTexts:
        """Assembles per-text segment rows (one array per text, in order)."""
        hidden = sentences.shape[1] if sentences.ndim == 2 else 0
        segments = np.vstack(rows) if rows else np.zeros((0, 2 * hidden), dtype=np.float32)
        offsets = np.concatenate([[0], np.cumsum([len(r) for r in rows], dtype=np.int64)]).astype(np.int64)
        return cls(sentences=sentences.astype(np.float32), segments=segments.astype(np.float32), offsets=offsets)
