"""The observation port (core/observation.py): what observers see of each request and session, how a
refusal reaches the client, and that an observer's bug never costs the client its answer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.core import ErrorCode, Ok, ProtocolError, Rejection
from hexmcp.core.observation import (OUTCOME_CANCELLED, OUTCOME_ERROR, OUTCOME_OK, OUTCOME_TOOL_ERROR,
                                     ObservedOutcome, ObservedRequest, ObservedSession, request_target)

from ..support.observed import observed_server
from ..support.peer import CoreClient, stateless_meta

pytestmark = pytest.mark.anyio


class Recorder:
    def __init__(self, name: str, journal: list[tuple[str, str, Any]], refuse: str | None = None) -> None:
        self.name, self.journal, self.refuse = name, journal, refuse
        self.requests: list[ObservedRequest] = []
        self.outcomes: list[ObservedOutcome] = []
        self.sessions: list[ObservedSession] = []

    def request_started(self, request: ObservedRequest) -> Any:
        self.journal.append((self.name, "start", request.method))
        if request.target is not None and request.target == self.refuse:
            raise ProtocolError(ErrorCode.RATE_LIMITED, "slow down", {"retryAfterSeconds": 2})
        self.requests.append(request)
        return self

    def request_finished(self, outcome: ObservedOutcome) -> None:
        self.journal.append((self.name, "finish", outcome.outcome))
        self.outcomes.append(outcome)

    def session_ended(self, session: ObservedSession) -> None:
        self.sessions.append(session)


_server = observed_server


async def test_a_tool_call_is_seen_with_its_target_arguments_and_outcome() -> None:
    recorder = Recorder("a", [])
    client = CoreClient(_server(recorder))
    await client.initialize()
    await client.ok("tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": {"traceparent": "00-x"}})
    call = recorder.requests[-1]
    assert (call.method, call.target, call.arguments) == ("tools/call", "echo", {"text": "hi"})
    assert call.meta == {"traceparent": "00-x"} and call.session_id == "test" and call.trace_id.startswith("t-")
    done = recorder.outcomes[-1]
    assert done.outcome == OUTCOME_OK and done.error_code is None and done.duration_s >= 0
    assert done.result is not None and done.result["content"][0]["text"] == "hi"


async def test_tool_errors_protocol_errors_and_cancellations_are_told_apart() -> None:
    recorder = Recorder("a", [])
    client = CoreClient(_server(recorder))
    await client.initialize()
    failed = await client.ok("tools/call", {"name": "broken", "arguments": {}})
    assert recorder.outcomes[-1].outcome == OUTCOME_TOOL_ERROR
    # The eventId the client got in the tool error's `_meta` (and its log line names): the audit's and the span's.
    assert recorder.outcomes[-1].event_id == failed["_meta"]["io.hexmcp/eventId"]
    rejection = await client.rejected("tools/call", {"name": "nope", "arguments": {}})
    assert recorder.outcomes[-1].outcome == OUTCOME_ERROR
    assert recorder.outcomes[-1].event_id == rejection.event_id
    pending = asyncio.ensure_future(client.request("tools/call", {"name": "forever", "arguments": {}}, key="slow"))
    await asyncio.sleep(0.01)
    await client.notify("notifications/cancelled", {"requestId": "slow"})
    outcome = await pending
    assert isinstance(outcome, Rejection) and outcome.code is ErrorCode.REQUEST_CANCELLED
    assert recorder.outcomes[-1].outcome == OUTCOME_CANCELLED


async def test_a_refusal_reaches_the_client_and_unwinds_the_scopes_opened_before_it() -> None:
    journal: list[tuple[str, str, Any]] = []
    first, refuser, never = Recorder("first", journal), Recorder("refuser", journal, refuse="echo"), Recorder("never", journal)
    client = CoreClient(_server(first, refuser, never))
    await client.initialize()
    journal.clear()
    rejection = await client.rejected("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    assert rejection.code is ErrorCode.RATE_LIMITED and rejection.data == {"retryAfterSeconds": 2}
    assert journal == [("first", "start", "tools/call"), ("refuser", "start", "tools/call"),
                       ("first", "finish", OUTCOME_ERROR)]
    # The refused request left nothing in flight: the next one is served.
    assert (await client.ok("tools/call", {"name": "broken", "arguments": {}}))["isError"] is True


async def test_scopes_finish_last_opened_first() -> None:
    journal: list[tuple[str, str, Any]] = []
    client = CoreClient(_server(Recorder("outer", journal), Recorder("inner", journal)))
    await client.ok("ping")
    assert [entry[:2] for entry in journal] == [("outer", "start"), ("inner", "start"),
                                                ("inner", "finish"), ("outer", "finish")]


async def test_an_observer_that_raises_on_finish_does_not_cost_the_answer() -> None:
    class Broken(Recorder):
        def request_finished(self, outcome: ObservedOutcome) -> None:
            raise RuntimeError("observer bug")

    client = CoreClient(_server(Broken("b", [])))
    await client.initialize()
    result = await client.ok("tools/call", {"name": "echo", "arguments": {"text": "still here"}})
    assert result["content"][0]["text"] == "still here"


async def test_stateless_requests_carry_their_version_and_sessions_report_their_end() -> None:
    recorder = Recorder("a", [])
    server = _server(recorder)
    client = CoreClient(server)
    await client.ok("tools/list", {"_meta": stateless_meta()})
    assert recorder.requests[-1].protocol_version == stateless_meta()["io.modelcontextprotocol/protocolVersion"]
    await client.initialize()
    await client.session.close()
    ended = recorder.sessions[-1]
    assert ended.session_id == "test" and ended.handshake and ended.duration_s >= 0


async def test_without_observers_nothing_is_recorded_and_answers_are_unchanged() -> None:
    client = CoreClient(_server())
    await client.initialize()
    outcome = await client.request("tools/call", {"name": "echo", "arguments": {"text": "plain"}})
    assert isinstance(outcome, Ok)


@given(method=st.sampled_from(["tools/call", "prompts/get", "resources/read", "tools/list", "ping"]),
       params=st.one_of(st.none(), st.integers(), st.dictionaries(st.sampled_from(["name", "uri", "x"]),
                                                                  st.one_of(st.text(), st.integers(), st.none()))))
def test_the_target_is_a_string_from_the_right_member_or_nothing(method: str, params: Any) -> None:
    target = request_target(method, params)
    assert target is None or isinstance(target, str)
    if target is not None:
        assert target == params[{"tools/call": "name", "prompts/get": "name"}.get(method, "uri")]
