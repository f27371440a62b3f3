"""Validators and converters shared by the adapters' attrs configuration classes, and the hint a
configuration error gives for a misspelt key."""

from __future__ import annotations

from typing import Iterable

import attrs


def positive(instance: object, attribute: attrs.Attribute, value: float | None) -> None:
    """attrs validator: None or a number above zero; the message names the class and the setting."""
    if value is not None and value <= 0:
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be positive, got {value!r}")


def string_tuple(value: object) -> tuple[str, ...]:
    """attrs converter: a comma-separated string (as from an environment variable) or any iterable."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return tuple(str(v) for v in value)  # type: ignore[union-attr]


def did_you_mean(word: str, candidates: Iterable[str], *, prefix: str = "") -> str:
    """` (did you mean {prefix}X?)` with the candidate X closest to a misspelt `word`, or "" when none is
    close. `prefix` (where the key sits, `serve.`) is shown, not compared: it would make any two keys alike."""
    import difflib  # only when a configuration is refused

    close = difflib.get_close_matches(word, list(candidates), n=1)
    return f" (did you mean {prefix}{close[0]}?)" if close else ""
