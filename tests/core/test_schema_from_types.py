"""JSON Schema from type hints (core/schemas/from_types.py): what the decorators derive a tool's schemas from."""

from __future__ import annotations

import enum
from typing import Annotated, Literal, NotRequired, Optional, TypedDict

import attrs

from hexmcp.core.schemas.from_types import input_schema_for, schema_for

Answer = TypedDict("Answer", {"class": Annotated[int, "an index", {"minimum": 0}],
                              "probabilities": NotRequired[list[Annotated[float, {"minimum": 0, "maximum": 1}]]]})


@attrs.frozen
class Point:
    x: float
    label: str = ""


def test_annotated_keywords_and_optional_typeddict_keys() -> None:
    assert schema_for(Answer) == {
        "type": "object",
        "properties": {"class": {"type": "integer", "description": "an index", "minimum": 0},
                       "probabilities": {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1}}},
        "required": ["class"]}


def test_attrs_classes_literals_and_optionals() -> None:
    assert schema_for(Point) == {"type": "object", "properties": {"x": {"type": "number"}, "label": {"type": "string"}},
                                 "required": ["x"]}
    assert schema_for(Literal["a", "b"]) == {"type": "string", "enum": ["a", "b"]}
    assert schema_for(Optional[int]) == {"anyOf": [{"type": "integer"}, {"type": "null"}]}


def test_a_tool_signature() -> None:
    async def tool(text: Annotated[str, "what to read", {"maxLength": 10}], limit: int = 5, ctx: object = None) -> str:
        return text

    assert input_schema_for(tool, skip=frozenset({"ctx"})) == {
        "type": "object", "properties": {"text": {"type": "string", "description": "what to read", "maxLength": 10},
                                         "limit": {"type": "integer", "default": 5}},
        "required": ["text"]}


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


def test_an_enum_says_the_type_its_values_share() -> None:
    """Gemini's function declarations (which VS Code hands a tool's input schema to) refuse a typeless enum."""
    assert schema_for(Colour) == {"type": "string", "enum": ["red", "blue"]}
    assert schema_for(Literal[1, 2]) == {"type": "integer", "enum": [1, 2]}
    assert schema_for(Literal[0.5, 1.5]) == {"type": "number", "enum": [0.5, 1.5]}
    assert schema_for(Literal[True]) == {"type": "boolean", "enum": [True]}
    assert schema_for(Literal[1, True]) == {"enum": [1, True]}  # a bool is no integer to JSON Schema
    assert schema_for(Literal["a", 1]) == {"enum": ["a", 1]}
