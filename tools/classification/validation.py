"""Checks on classify() arguments, raising ClassificationInputError that names the field."""

from __future__ import annotations

from .errors import ClassificationInputError


def validate_text(text: object, max_chars: int, field: str = "text") -> str:
    if text is None:
        raise ClassificationInputError(field, "is required")
    if not isinstance(text, str):
        raise ClassificationInputError(field, f"must be a string, got {type(text).__name__}")
    if not text.strip():
        raise ClassificationInputError(field, "must not be empty or whitespace only")
    if len(text) > max_chars:
        raise ClassificationInputError(field, f"is {len(text)} characters; the limit is {max_chars}")
    return text


def validate_flag(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise ClassificationInputError(field, f"must be a boolean, got {type(value).__name__}")
    return value
