"""Properties: every model survives the wire, and no params can make the core raise."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexmcp.core import ErrorCode, McpServer, Ok, Rejection, models, versions
from hexmcp.core.convert import from_wire, to_wire
from hexmcp.core.handlers import ROUTES
from hexmcp.core.meta import META_PROTOCOL_VERSION

from ..fixtures.demo_server import build_demo_server
from ..support import schemas
from ..support.peer import RecordingPeer, initialize_params, stateless_meta
from ..support.strategies import JSON_VALUES, model_strategy


@pytest.mark.parametrize("model", models.ALL_MODELS, ids=lambda cls: cls.__name__)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_model_survives_a_round_trip_at_the_latest_version(model: type, data: st.DataObject) -> None:
    value = data.draw(model_strategy(model))
    assert from_wire(to_wire(value, versions.LATEST_VERSION), model) == value


SERVER: McpServer = build_demo_server()
METHODS = st.sampled_from(sorted(ROUTES)) | st.text(max_size=30)
PARAMS = JSON_VALUES | st.fixed_dictionaries({}, optional={
    "name": st.sampled_from([t.name for t in SERVER.tools.definitions()]) | st.text(max_size=8),
    "arguments": st.dictionaries(st.sampled_from(["text", "a", "b", "seconds", "steps", "reason", "x"]),
                                 JSON_VALUES, max_size=3) | JSON_VALUES,
    "uri": st.sampled_from(["demo://greeting", "demo://items/apple", "demo://x"]) | st.text(max_size=8),
    "cursor": st.text(max_size=8), "level": st.text(max_size=8), "ref": JSON_VALUES, "argument": JSON_VALUES,
    "requestState": st.text(max_size=12), "inputResponses": JSON_VALUES,
    "_meta": st.just(stateless_meta()) | st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=2),
})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(method=METHODS, params=PARAMS, initialized=st.booleans(),
       version=st.sampled_from(versions.HANDSHAKE_VERSIONS))
def test_any_params_to_any_method_get_an_answer_never_an_exception(method: str, params: Any, initialized: bool,
                                                                   version: str) -> None:
    if method == "tools/call" and isinstance(params, dict) and params.get("name") == "slow":
        params = {**params, "arguments": {"seconds": 0}}  # arbitrary sleeps would only slow the test down

    async def scenario() -> Any:
        session = SERVER.open_session(session_id="fuzz", peer=RecordingPeer())
        if initialized:
            await session.handle_request("initialize", initialize_params(version), request_key=0, trace_id="t")
            await session.handle_notification("notifications/initialized", None, trace_id="t")
        outcome = await asyncio.wait_for(session.handle_request(method, params, request_key=1, trace_id="t"), 5)
        return session, outcome

    session, outcome = asyncio.run(scenario())
    assert isinstance(outcome, (Ok, Rejection))
    if isinstance(outcome, Rejection):
        assert outcome.code is not ErrorCode.INTERNAL_ERROR, outcome
        return
    meta = params.get("_meta") if isinstance(params, dict) else None
    stateless = isinstance(meta, dict) and meta.get(META_PROTOCOL_VERSION) in versions.STATELESS_VERSIONS
    schemas.validate_result(versions.LATEST_VERSION if stateless else session.version or version, method,
                            outcome.result)

