"""The quick schema check may only ever say "valid" when jsonschema agrees, and says it for what tools get."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexmcp.core.schemas.quick_check import compile_quick_check
from hexmcp.core.schemas.from_types import input_schema_for
from hexmcp.core.tools import compile_validator

from ..support.strategies import JSON_VALUES

TYPE_NAMES = st.sampled_from(["object", "array", "string", "integer", "number", "boolean", "null"])
ANNOTATIONS = st.fixed_dictionaries({}, optional={"description": st.text(max_size=5), "default": JSON_VALUES,
                                                  "title": st.text(max_size=5)})
TYPES = TYPE_NAMES | st.lists(TYPE_NAMES, min_size=1, max_size=3, unique=True)
LEAF_SCHEMAS = st.one_of(
    st.builds(lambda t, a: {"type": t, **a}, TYPES, ANNOTATIONS),
    st.builds(lambda e: {"enum": e}, st.lists(st.text(max_size=3), min_size=1, max_size=3)),
    st.just({}), st.just(True),
    st.builds(lambda t, k, n: {"type": t, k: n}, st.sampled_from(["number", "integer"]),
              st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]),
              st.integers(-3, 3) | st.floats(-3, 3)),
    st.builds(lambda k, n: {k: n}, st.sampled_from(["minimum", "maximum", "minLength", "maxLength", "minItems",
                                                    "maxItems"]), st.integers(0, 3)))


def _compound(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    names = st.sampled_from(["a", "b", "text", "n"])
    objects = st.builds(
        lambda props, required, extra, typed: {**({"type": "object"} if typed else {}), "properties": props,
                                               **({"required": required} if required else {}),
                                               **({"additionalProperties": extra[0]} if extra else {})},
        st.dictionaries(names, inner, max_size=3), st.lists(names, max_size=2, unique=True),
        st.lists(inner | st.booleans(), max_size=1), st.booleans())
    return (objects | st.builds(lambda i: {"type": "array", "items": i}, inner)
            | st.builds(lambda o: {"anyOf": o}, st.lists(inner, min_size=1, max_size=3)))


SIMPLE_SCHEMAS = st.recursive(LEAF_SCHEMAS, _compound, max_leaves=6)
INSTANCES = JSON_VALUES | st.dictionaries(st.sampled_from(["a", "b", "text", "n", "x"]), JSON_VALUES, max_size=4)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=SIMPLE_SCHEMAS, instance=INSTANCES)
def test_quick_check_agrees_with_jsonschema(schema: Any, instance: Any) -> None:
    """A quick "valid" is always right; and it is only withheld where 1.0 would count as an integer."""
    check = compile_quick_check(schema)
    assert check is not None, schema
    valid = compile_validator(schema if schema is not True else {}).is_valid(instance)
    if check(instance):
        assert valid, (schema, instance)
    elif not _has_integral_float(instance):
        assert not valid, (schema, instance)


def _has_integral_float(value: Any) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, list):
        return any(_has_integral_float(v) for v in value)
    if isinstance(value, dict):
        return any(_has_integral_float(v) for v in value.values())
    return False


@pytest.mark.parametrize("schema", [
    {"type": "string", "format": "email"},
    {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"},
    {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
    {"type": "string", "pattern": "^a"},
    {"type": "number", "exclusiveMinimum": True},
    {"enum": [1, True]},
    {"type": "array", "items": [{"type": "string"}]},
    {"$ref": "#/$defs/x", "$defs": {"x": {}}},
])
def test_schemas_outside_the_subset_get_no_quick_check(schema: dict[str, Any]) -> None:
    assert compile_quick_check(schema) is None


def test_schemas_derived_from_signatures_get_a_quick_check() -> None:
    async def tool(text: Annotated[str, "what to say"], times: int = 1, mode: Literal["a", "b"] | None = None,
                   tags: list[str] | None = None, extra: dict[str, float] | None = None) -> str:
        return text

    check = compile_quick_check(input_schema_for(tool, skip=frozenset()))
    assert check is not None
    assert check({"text": "hi", "times": 2, "mode": "a", "tags": ["x"], "extra": {"k": 1.5}})
    assert not check({"text": "hi", "times": True})
    assert not check({"times": 2})


@pytest.mark.parametrize(("schema", "good", "bad"), [
    ({"type": "array", "items": {"type": "string"}}, ["a", "b", "c"], ["a", "b", 3]),
    ({"type": "array", "items": {"type": "integer", "description": "n"}}, [1, 2], [1, True]),
    ({"type": "array", "items": {"type": ["string", "null"]}}, ["a", None], ["a", 1.5]),
    ({"type": "object", "additionalProperties": {"type": "string"}}, {"a": "x", "b": "y"}, {"a": "x", "b": ["y"]}),
    ({"type": "object", "additionalProperties": {"type": "number"}}, {"a": 1, "b": 2.5}, {"a": 1, "b": False}),
])
def test_containers_of_bare_types_check_every_member(schema: dict[str, Any], good: Any, bad: Any) -> None:
    """Members of a bare type are checked all at once by class (no call per member): a wrong one in the
    last place, or a boolean where numbers go, must still fail."""
    check = compile_quick_check(schema)
    assert check is not None and check(good) and check([] if isinstance(good, list) else {})
    assert not check(bad)
    assert not compile_validator(schema).is_valid(bad)  # the full validator agrees it is invalid


HOSTILE_NAMES = st.sampled_from(['"', "'", "\\", "x) or (True", "__import__('os')", "{}", "\n", "_c0", "instance"])


@settings(max_examples=200, deadline=None)
@given(name=HOSTILE_NAMES, member=JSON_VALUES, choice=HOSTILE_NAMES)
def test_names_and_values_from_the_schema_are_data_not_code(name: str, member: Any, choice: str) -> None:
    """The check is compiled from generated source: a property name or enum member that looks like code,
    quotes or the source's own names must be compared as data."""
    schema = {"type": "object", "properties": {name: {"enum": [choice]}}, "required": [name],
              "additionalProperties": {"type": "integer"}}
    check = compile_quick_check(schema)
    assert check is not None
    assert check({name: choice})
    assert not check({name: choice + "x"})
    assert not check({})
    assert check({name: choice, "other": 3}) and not check({name: choice, "other": "3"})
    instance = {name: member}
    if check(instance):
        assert compile_validator(schema).is_valid(instance)


def test_a_schema_too_deep_for_one_expression_is_checked_in_full() -> None:
    schema: Any = {"type": "string"}
    for _ in range(400):
        schema = {"type": "array", "items": {"anyOf": [schema, {"type": "null"}]}}
    check = compile_quick_check(schema)  # too deep for the compiler: no quick check, never a crash
    assert check is None or check([]) is True
