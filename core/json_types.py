"""The JSON type of a decoded value, as error messages name it ("got array", "is a string")."""

from __future__ import annotations

from typing import Any


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: a bool is an int to Python
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
