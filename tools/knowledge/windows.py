"""A passage's windows: the texts embedded for it, so that every token of it reaches the encoder.

MiniLM reads 256 tokens; a fifth to a half of the 1,000-character passages of real documentation run past
that, and the tail was never embedded. A passage that fits is one window, its `indexed_text()`, as before.
A longer one keeps that first window (title, heading path, the body's start; the tokenizer truncates it)
and gets further windows over the rest of its body, each with the title and heading path in front, each
sharing WINDOW_OVERLAP tokens with the one before, the last ending at the body's end. Its dense score is
its best window's cosine (retrieval.py). The measurements: docs/adr/0604-distinct-pages-across-versions.md.

The store keeps one row per window: the first under the passage id, the others under `row_id(id, n)`.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from .passages import Passage

#: Part of the passage-vector cache key: bump when the windows a passage gets change.
WINDOWS_VERSION = "1"
#: Tokens a further window shares with the window before it, so a sentence cut at a window's edge is whole
#: in one of the two (a sentence of documentation is some 20-40 tokens).
WINDOW_OVERLAP = 64
_MARK = "#w"

#: A text's tokens as (start, end) character offsets, special tokens left out (the encoder's tokenizer).
TokenOffsets = Callable[[str], Sequence[tuple[int, int]]]


def row_id(passage_id: str, window: int) -> str:
    """The store row of a passage's window `window` (0: the passage id itself)."""
    return passage_id if window == 0 else f"{passage_id}{_MARK}{window}"


def passage_of_row(row: str) -> str:
    """The passage a store row belongs to."""
    return row.split(_MARK, 1)[0]


def passage_windows(passage: Passage, offsets: TokenOffsets, max_tokens: int,
                    overlap: int = WINDOW_OVERLAP) -> list[str]:
    """The texts to embed for `passage`, the first being `passage.indexed_text()`."""
    first = passage.indexed_text()
    text = passage.body_text()  # the source slice, or what is indexed of it (markup cleaned out)
    room = max_tokens - 2  # [CLS] and [SEP]
    context = first[: len(first) - len(text)]  # "title > headings\n\n", or nothing
    context_tokens = len(offsets(context)) if context else 0
    body = offsets(text)
    covered = max(room - context_tokens, 0)  # body tokens the first window reads
    if len(body) <= covered:
        return [first]
    width = room - context_tokens
    if width < max(2 * overlap, room // 2):  # a heading path that fills half the window: further windows of body alone
        context, width = "", room
    overlap = min(overlap, width // 2)  # a window always moves on by at least half its width
    step = width - overlap
    first_start = max(covered - overlap, 0)
    last_start = max(len(body) - width, 0)
    count = 1 if last_start <= first_start else 1 + math.ceil((last_start - first_start) / step)
    starts = [first_start + round(i * (last_start - first_start) / (count - 1)) if count > 1 else last_start
              for i in range(count)]
    return [first, *(context + text[body[s][0]:body[min(s + width, len(body)) - 1][1]] for s in starts)]
