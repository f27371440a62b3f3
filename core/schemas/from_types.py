"""JSON Schema derived from Python type hints, so a tool is declared once.

Covers what tool signatures use: str, int, float, bool, None, list/tuple/set, dict[str, T], Optional
and unions, Literal, enums, attrs classes and TypedDicts (NotRequired keys are optional), with
`Annotated[T, "description"]` for per-argument descriptions and `Annotated[T, {"minimum": 0}]` for any
other JSON Schema keywords (merged over what the type gives).
"""

from __future__ import annotations

import enum
import inspect
import types
import typing
from typing import Any, Callable

import attrs

_PRIMITIVES: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    Any: {},
}


def schema_for(hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        schema = schema_for(args[0])
        descriptions = [a for a in args[1:] if isinstance(a, str)]
        if descriptions:
            schema["description"] = descriptions[0]
        for keywords in (a for a in args[1:] if isinstance(a, dict)):
            schema.update(keywords)
        return schema
    if origin in (typing.Required, typing.NotRequired):
        return schema_for(args[0])
    if origin is None and hint in _PRIMITIVES:  # an Annotated hint with a dict in it would not hash
        return dict(_PRIMITIVES[hint])
    if origin in (typing.Union, types.UnionType):
        options = [schema_for(a) for a in args]
        return {"anyOf": options}
    if origin is typing.Literal:
        return _enum_schema(list(args))
    if origin in (list, tuple, set, frozenset) or hint in (list, tuple, set):
        schema: dict[str, Any] = {"type": "array"}
        if args and args[-1] is not Ellipsis:
            schema["items"] = schema_for(args[0])
        return schema
    if origin is dict or hint is dict:
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = schema_for(args[1])
        return schema
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum_schema([member.value for member in hint])
    if isinstance(hint, type) and attrs.has(hint):
        return _object_schema(typing.get_type_hints(hint, include_extras=True),
                              required={a.name for a in attrs.fields(hint) if a.default is attrs.NOTHING})
    if typing.is_typeddict(hint):
        return _object_schema(typing.get_type_hints(hint, include_extras=True), required=set(hint.__required_keys__))
    raise TypeError(f"cannot derive a JSON schema for {hint!r}")


def _json_type(value: Any) -> str | None:
    if isinstance(value, bool):  # before int: a bool is an int to Python, not to JSON Schema
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "null" if value is None else None


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    """`enum`, with the `type` its values share: the function-declaration subset some model providers
    accept (Gemini's, which hosts such as VS Code hand a tool's input schema to verbatim) refuses an enum
    without a type, and with it the whole tool list. Values of mixed types keep the bare enum."""
    kinds = {_json_type(value) for value in values}
    if len(kinds) == 1 and None not in kinds:
        return {"type": kinds.pop(), "enum": values}
    return {"enum": values}


def _object_schema(hints: dict[str, Any], required: set[str]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": {name: schema_for(h) for name, h in hints.items()}}
    if required:
        schema["required"] = [name for name in hints if name in required]
    return schema


def input_schema_for(function: Callable[..., Any], skip: frozenset[str]) -> dict[str, Any]:
    """The input schema of a tool function: one property per parameter not in `skip`."""
    hints = typing.get_type_hints(function, include_extras=True)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, parameter in inspect.signature(function).parameters.items():
        if name in skip or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        properties[name] = schema_for(hints.get(name, Any))
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
        elif parameter.default is not None:
            properties[name]["default"] = parameter.default
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema
