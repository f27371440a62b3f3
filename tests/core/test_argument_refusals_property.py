"""Property: any argument object the tool's input schema refuses answers exactly one form, the one of the
request's version: JSON-RPC -32602 up to 2025-06-18, an isError result from 2025-11-25 on (SEP-1303)."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import assume, given, settings, strategies as st

from hexmcp.core import ErrorCode, Ok, Outcome, Rejection, versions
from hexmcp.core.meta import META_ERROR_CODE, META_ERROR_DATA, META_EVENT_ID

from ..fixtures.demo_server import build_demo_server
from ..support.peer import CoreClient, stateless_meta
from ..support.strategies import JSON_VALUES

SERVER = build_demo_server()
ADD = SERVER.tools.get("add")  # {"a": integer, "b": integer}, both required

argument_objects = st.dictionaries(st.sampled_from(["a", "b", "c", ""]) | st.text(max_size=4), JSON_VALUES, max_size=4)


async def _call(version: str, arguments: dict[str, Any]) -> Outcome:
    client = CoreClient(SERVER)
    params: dict[str, Any] = {"name": "add", "arguments": arguments}
    if version in versions.STATELESS_VERSIONS:
        params["_meta"] = stateless_meta(version)
    else:
        await client.initialize(version)
    return await client.request("tools/call", params)


@settings(max_examples=120, deadline=None)
@given(arguments=argument_objects, version=st.sampled_from(versions.SUPPORTED_VERSIONS))
def test_a_refused_argument_object_answers_exactly_the_form_of_its_version(arguments: dict[str, Any],
                                                                          version: str) -> None:
    assume(not ADD.validator.is_valid(arguments))
    outcome = asyncio.run(_call(version, arguments))
    if versions.features(version).argument_errors_as_results:
        assert isinstance(outcome, Ok), outcome
        result, meta = outcome.result, outcome.result["_meta"]
        assert result["isError"] is True and meta[META_ERROR_CODE] == ErrorCode.INVALID_PARAMS.value
        assert meta[META_ERROR_DATA]["path"].startswith("$.arguments")
        assert result["content"][0]["text"].endswith(f"(eventId {meta[META_EVENT_ID]})")
    else:
        assert isinstance(outcome, Rejection), outcome
        assert outcome.code is ErrorCode.INVALID_PARAMS and outcome.data["path"].startswith("$.arguments")
