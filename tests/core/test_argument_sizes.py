"""Property: an argument over the size its schema declares (maxItems, maxProperties, maxLength) is refused
by that size alone, before the full validator walks it.

jsonschema descends into every item of an array before it reaches `maxItems`, and the refusal then walks it
again for the best error: `queryGraph` with 300,000 relations (2.4 MB, under the 4 MiB message cap) took
3.2 s of the event loop to refuse (7.3 s on a loaded machine), stalling every other client of the process.
The declared size decides at once, and the answer is the one the full validator gave.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.core import ErrorCode, McpServer, Rejection, versions

from ..support.peer import CoreClient
from ..support.strategies import JSON_VALUES

SCHEMA = {"type": "object", "properties": {
    "tags": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 5},
    "options": {"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 3},
    "text": {"type": "string", "maxLength": 10, "pattern": "^a+$"},
}}


class CountingValidator:
    """The tool's full validator, counting how often it is consulted."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0

    def is_valid(self, instance: Any) -> bool:
        self.calls += 1
        return self.inner.is_valid(instance)

    def iter_errors(self, instance: Any) -> Any:
        self.calls += 1
        return self.inner.iter_errors(instance)


def _server() -> tuple[McpServer, CountingValidator]:
    server = McpServer("sizes", "1")

    async def handler(arguments: dict[str, Any], ctx: Any) -> str:
        return "ran"

    tool = server.tools.add("sized", handler, description="Takes sized arguments.", input_schema=SCHEMA)
    counting = CountingValidator(tool.validator)
    object.__setattr__(tool, "validator", counting)  # a frozen class: the test's spy goes in by hand
    return server, counting


OVERSIZE = st.one_of(
    st.tuples(st.just("tags"), st.lists(JSON_VALUES, min_size=6, max_size=40)),
    st.tuples(st.just("options"), st.dictionaries(st.text(max_size=5), JSON_VALUES, min_size=4, max_size=20)),
    st.tuples(st.just("text"), st.text(min_size=11, max_size=60)),
)
UNIT = {"tags": "items", "options": "members", "text": "characters"}


@settings(max_examples=60, deadline=None)
@given(oversize=OVERSIZE, others=st.fixed_dictionaries({}, optional={"tags": st.just(["a"]), "text": st.just("aa")}))
def test_an_argument_over_its_declared_size_is_refused_without_the_full_validator(oversize, others) -> None:
    name, value = oversize
    arguments = {**others, name: value}
    server, counting = _server()

    async def call() -> Any:
        client = CoreClient(server)
        await client.initialize(versions.V2025_06_18)
        return await client.request("tools/call", {"name": "sized", "arguments": arguments})

    outcome = asyncio.run(call())
    assert isinstance(outcome, Rejection) and outcome.code is ErrorCode.INVALID_PARAMS, outcome
    limit = SCHEMA["properties"][name].get("maxItems") or SCHEMA["properties"][name].get("maxProperties") \
        or SCHEMA["properties"][name]["maxLength"]
    assert f"argument {name} " in outcome.message and f"{len(value)} {UNIT[name]}" in outcome.message \
        and f"the limit is {limit}" in outcome.message, outcome.message
    assert outcome.data["path"] == f"$.arguments.{name}"
    assert (outcome.data["limit"], outcome.data["length"]) == (limit, len(value))
    assert counting.calls == 0, "the full validator walked an argument its declared size already refuses"


def test_arguments_within_their_sizes_are_still_checked_in_full() -> None:
    server, counting = _server()

    async def calls() -> tuple[Any, Any]:
        client = CoreClient(server)
        await client.initialize(versions.V2025_06_18)
        bad = await client.request("tools/call", {"name": "sized", "arguments": {"tags": ["a", ""], "text": "ab"}})
        good = await client.request("tools/call", {"name": "sized", "arguments": {"tags": ["a"], "text": "aa"}})
        return bad, good

    bad, good = asyncio.run(calls())
    assert isinstance(bad, Rejection) and bad.code is ErrorCode.INVALID_PARAMS and counting.calls >= 1
    assert not isinstance(good, Rejection), good
