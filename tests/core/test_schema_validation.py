"""When jsonschema runs (ADR 0007): a tool's schemas are checked at registration unless our own tests
check them (built-in tools), and a validator compiled on first use answers exactly as one compiled at once."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.core import ProtocolError, ToolContext
from hexmcp.core.schemas.validation import LazyValidator
from hexmcp.core.tools import OutputSchemaViolation, ToolRegistry, to_call_result

# `pattern` and `format` are outside the quick check's subset, so jsonschema decides every call.
INPUT = {"type": "object", "required": ["code"], "additionalProperties": False,
         "properties": {"code": {"type": "string", "pattern": "^[a-z]{2}-[0-9]+$"}, "n": {"type": "integer"}}}
OUTPUT = {"type": "object", "required": ["when"], "properties": {"when": {"type": "string", "pattern": "^[0-9]{4}$"}}}


async def handler(arguments: dict[str, Any], ctx: ToolContext) -> Any:
    return arguments


def both_ways() -> tuple[Any, Any]:
    """The same tool registered eagerly and lazily, each in its own registry."""
    eager, lazy = ToolRegistry(), ToolRegistry()
    return (eager.add("t", handler, description="", input_schema=INPUT, output_schema=OUTPUT),
            lazy.add("t", handler, description="", input_schema=INPUT, output_schema=OUTPUT,
                     schemas_checked_in_tests=True))


def outcome_of_arguments(tool: Any, arguments: Any) -> tuple[Any, ...] | None:
    try:
        tool.check_arguments(arguments)
    except ProtocolError as error:
        return error.code, error.message, error.data
    return None


def outcome_of_result(tool: Any, value: Any) -> str | None:
    try:
        to_call_result(value, tool)
    except OutputSchemaViolation as violation:
        return str(violation)
    return None


@pytest.mark.parametrize("schema", [{"type": "nonsense"}, {"type": "object", "properties": {"a": {"minimum": "0"}}},
                                    {"type": "object", "required": "a"}])
def test_an_invalid_schema_is_refused_at_registration(schema: dict) -> None:
    registry = ToolRegistry()
    with pytest.raises(jsonschema.exceptions.SchemaError):
        registry.add("bad", handler, description="", input_schema=schema)
    with pytest.raises(jsonschema.exceptions.SchemaError):
        registry.add("bad", handler, description="", input_schema={"type": "object"}, output_schema=schema)
    assert "bad" not in registry


def test_only_tools_checked_in_tests_compile_later() -> None:
    eager, lazy = both_ways()
    assert not isinstance(eager.validator, LazyValidator) and not isinstance(eager.output_validator, LazyValidator)
    assert isinstance(lazy.validator, LazyValidator) and isinstance(lazy.output_validator, LazyValidator)


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                           max_leaves=8)
codes = st.from_regex(r"^[a-z]{2}-[0-9]+$", fullmatch=True) | st.text(max_size=8)


@given(arguments=st.fixed_dictionaries({"code": codes}, optional={"n": json_values, "x": json_values}) | json_values)
def test_a_lazy_validator_refuses_exactly_what_an_eager_one_does(arguments: Any) -> None:
    eager, lazy = both_ways()
    assert outcome_of_arguments(lazy, arguments) == outcome_of_arguments(eager, arguments)


@given(value=st.fixed_dictionaries({"when": st.from_regex(r"^[0-9]{4}$", fullmatch=True) | json_values}) | json_values)
def test_a_lazy_output_check_refuses_exactly_what_an_eager_one_does(value: Any) -> None:
    eager, lazy = both_ways()
    assert outcome_of_result(lazy, value) == outcome_of_result(eager, value)


def test_the_examples_do_reach_jsonschema() -> None:
    """Both outcomes occur, so the properties above compare refusals and not only acceptances."""
    _, lazy = both_ways()
    assert outcome_of_arguments(lazy, {"code": "ab-12"}) is None
    assert outcome_of_arguments(lazy, {"code": "AB-12"})[2] == {"path": "$.arguments.code", "tool": "t"}
    assert outcome_of_result(lazy, {"when": "1999"}) is None
    assert outcome_of_result(lazy, {"when": "99"}).startswith("$.when: ")


@given(when=st.one_of(st.text(max_size=6), st.integers(), st.none()))
def test_only_a_tool_that_says_its_tests_check_its_output_skips_the_check_per_call(when: Any) -> None:
    """ADR 0012: `output_checked_in_tests` moves the output check to the tool's own tests; every other
    tool (the default, user tools) has each result checked, a result its schema refuses never passing."""
    checked, trusted = ToolRegistry(), ToolRegistry()
    default = checked.add("t", handler, description="", input_schema=INPUT, output_schema=OUTPUT)
    opted_out = trusted.add("t", handler, description="", input_schema=INPUT, output_schema=OUTPUT,
                            schemas_checked_in_tests=True, output_checked_in_tests=True)
    value = {"when": when}
    valid = jsonschema.Draft202012Validator(OUTPUT).is_valid(value)
    assert (outcome_of_result(default, value) is None) == valid
    assert default.output_checked_at_run_time and not opted_out.output_checked_at_run_time
    assert outcome_of_result(opted_out, value) is None
