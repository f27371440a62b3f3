"""The one check of classify() arguments, raising ClassificationInputError that names the field.

Every caller goes through it: the MCP tool (whose JSON Schema has already made sure of the types),
the Python API, the benches. The MCP tool turns the error into invalid params with this message.
"""

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
        raise ClassificationInputError(field, f"is {len(text)} characters long; the limit is {max_chars}",
                                       {"limit": max_chars, "length": len(text)})
    return text


def validate_flag(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise ClassificationInputError(field, f"must be a boolean, got {type(value).__name__}")
    return value
