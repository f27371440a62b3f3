"""The closest valid name for a misspelt one, for the errors that refuse a configuration key or a name."""

from __future__ import annotations

from typing import Iterable


def did_you_mean(word: str, candidates: Iterable[str], *, prefix: str = "") -> str:
    """` (did you mean {prefix}X?)` with the candidate X closest to a misspelt `word`, or "" when none is
    close. `prefix` (where the key sits, `serve.`) is shown, not compared: it would make any two keys alike."""
    import difflib  # only when a configuration is refused

    close = difflib.get_close_matches(word, list(candidates), n=1)
    return f" (did you mean {prefix}{close[0]}?)" if close else ""
