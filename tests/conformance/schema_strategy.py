"""Hypothesis strategies from JSON Schema: the official MCP definitions and each tool's `inputSchema`.

hypothesis-jsonschema 0.23 is installed, but it fails on any object with optional properties under
the hypothesis in this venv (`AttributeError: 'many' object has no attribute 'more'`), so this module
is the suite's own converter. It covers the subset the MCP schemas and tool schemas use: `type`
(one or a list), `const`, `enum`, `properties`/`required`/`additionalProperties`, `items`,
`anyOf`/`oneOf` (a branch at random; `oneOf` overlaps are rare in MCP and the validator in the tests
has the last word), `allOf` (merged), numeric and length bounds, and `$ref` (inlined by `resolve`,
recursion cut to "any value"). `format` is ignored: it is an annotation for the validator too.
Values are kept small (a few items, short strings) so a request stays cheap to send.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

from ..support.strategies import JSON_VALUES

SKIPPED_KEYS = frozenset({"description", "format", "$comment", "examples", "title", "default", "$schema"})


def resolve(document: dict[str, Any], node: Any, stack: tuple[str, ...] = ()) -> Any:
    """`node` with every `$ref` into the document's definitions inlined; recursive refs become `{}`."""
    definitions = document.get("$defs") or document.get("definitions") or {}
    if isinstance(node, list):
        return [resolve(document, item, stack) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        base = {} if name in stack or name not in definitions else resolve(document, definitions[name], (*stack, name))
        return {**base, **{k: resolve(document, v, stack) for k, v in node.items() if k != "$ref"}}
    resolved: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("const", "enum"):
            resolved[key] = value
        elif key == "properties":  # its keys are property names ("title", "description"), never keywords
            resolved[key] = {name: resolve(document, sub, stack) for name, sub in value.items()}
        elif key not in SKIPPED_KEYS:
            resolved[key] = resolve(document, value, stack)
    return resolved


def from_schema(schema: Any, *, max_items: int = 3) -> st.SearchStrategy[Any]:
    if schema is True or schema == {} or schema is None:
        return JSON_VALUES
    if schema is False:
        return st.nothing()
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            rest = {k: v for k, v in schema.items() if k != key}
            return st.one_of([from_schema({**rest, **branch}, max_items=max_items) for branch in schema[key]])
    if "allOf" in schema:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            merged = _merge(merged, part)
        return from_schema(merged, max_items=max_items)
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([from_schema({**schema, "type": k}, max_items=max_items) for k in kind])
    if kind is None:
        kind = "object" if "properties" in schema else None
    if kind is None:
        return JSON_VALUES
    return _BY_TYPE[kind](schema, max_items)


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    merged = {**a, **b}
    if "properties" in a and "properties" in b:
        merged["properties"] = {**a["properties"], **b["properties"]}
    if "required" in a and "required" in b:
        merged["required"] = sorted(set(a["required"]) | set(b["required"]))
    return merged


def _object(schema: dict[str, Any], max_items: int) -> st.SearchStrategy[Any]:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    fixed = {name: from_schema(sub, max_items=max_items) for name, sub in properties.items() if name in required}
    optional = {name: from_schema(sub, max_items=max_items) for name, sub in properties.items() if name not in required}
    missing = required - properties.keys()
    fixed.update({name: JSON_VALUES for name in missing})
    base = st.fixed_dictionaries(fixed, optional=optional)
    extra = schema.get("additionalProperties", True)
    if extra is False or extra is None or not isinstance(extra, (bool, dict)):
        return base
    values = JSON_VALUES if extra is True else from_schema(extra, max_items=max_items)
    names = st.text(max_size=10).filter(lambda n: n not in properties)
    return st.tuples(base, st.dictionaries(names, values, max_size=1 if extra is True else max_items)).map(
        lambda pair: {**pair[1], **pair[0]})


def _array(schema: dict[str, Any], max_items: int) -> st.SearchStrategy[Any]:
    items = schema.get("items", {})
    low = schema.get("minItems", 0)
    return st.lists(from_schema(items, max_items=max_items), min_size=low, max_size=max(low, schema.get("maxItems", max_items)))


def _string(schema: dict[str, Any], max_items: int) -> st.SearchStrategy[Any]:
    low = schema.get("minLength", 0)
    return st.text(min_size=low, max_size=max(low, min(schema.get("maxLength", 20), 20)))


def _integer(schema: dict[str, Any], max_items: int) -> st.SearchStrategy[Any]:
    low = schema.get("minimum", -(2**31))
    high = schema.get("maximum", 2**31)
    if "exclusiveMinimum" in schema and not isinstance(schema["exclusiveMinimum"], bool):
        low = schema["exclusiveMinimum"] + 1
    if "exclusiveMaximum" in schema and not isinstance(schema["exclusiveMaximum"], bool):
        high = schema["exclusiveMaximum"] - 1
    return st.integers(math.ceil(low), math.floor(high))


def _number(schema: dict[str, Any], max_items: int) -> st.SearchStrategy[Any]:
    low, high = schema.get("minimum"), schema.get("maximum")
    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False) | _integer(
        {k: v for k, v in schema.items() if k in ("minimum", "maximum")}, max_items)


_BY_TYPE = {
    "object": _object,
    "array": _array,
    "string": _string,
    "integer": _integer,
    "number": _number,
    "boolean": lambda schema, max_items: st.booleans(),
    "null": lambda schema, max_items: st.none(),
}
