"""What the core sends while a request runs: progress, log messages; and cancellation stopping it."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.core import ErrorCode, McpServer, Rejection, ToolContext, versions
from hexmcp.core.params import LOG_LEVELS

from ..fixtures.demo_server import build_demo_server
from ..support.peer import CoreClient, RecordingPeer

pytestmark = pytest.mark.anyio


async def test_progress_is_sent_only_with_a_progress_token(client: CoreClient) -> None:
    await client.initialize()
    await client.ok("tools/call", {"name": "slow", "arguments": {"seconds": 0.0, "steps": 3}})
    assert client.peer.notified("notifications/progress") == []
    await client.ok("tools/call", {"name": "slow", "arguments": {"seconds": 0.0, "steps": 3},
                                   "_meta": {"progressToken": "tok"}}, key="r-1")
    progress = client.peer.notified("notifications/progress")
    assert [p["progress"] for p in progress] == [1, 2, 3]
    assert {p["progressToken"] for p in progress} == {"tok"}
    assert {n.related for n in client.peer.notifications} == {"r-1"}


@given(token=st.one_of(st.booleans(), st.floats(allow_nan=False).filter(lambda f: not f.is_integer()),
                       st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=3)))
@settings(max_examples=25, deadline=None)
async def test_a_progress_token_that_is_not_a_string_or_an_integer_is_refused_by_name(token) -> None:
    """Every version's schema: `ProgressToken = string | integer`. Anything else would be echoed back in
    each notification; it is refused before the request runs, and nothing is sent for it."""
    client = CoreClient(build_demo_server(), RecordingPeer())
    await client.initialize()
    before = len(client.peer.notified("notifications/progress"))
    rejection = await client.rejected("tools/call", {"name": "slow", "arguments": {"seconds": 0.0, "steps": 2},
                                                     "_meta": {"progressToken": token}})
    assert rejection.code == ErrorCode.INVALID_PARAMS and "progressToken" in rejection.message
    assert rejection.data["path"] == "$._meta.progressToken"
    assert len(client.peer.notified("notifications/progress")) == before


async def test_progress_messages_only_where_the_version_has_them(client: CoreClient) -> None:
    await client.initialize(versions.V2024_11_05)
    await client.ok("tools/call", {"name": "slow", "arguments": {"seconds": 0.0, "steps": 1},
                                   "_meta": {"progressToken": 7}})
    [progress] = client.peer.notified("notifications/progress")
    assert "message" not in progress


async def test_log_messages_obey_set_level(client: CoreClient) -> None:
    await client.initialize()
    await client.ok("logging/setLevel", {"level": "info"})
    await client.ok("tools/call", {"name": "chatty", "arguments": {}})
    levels = [m["level"] for m in client.peer.notified("notifications/message")]
    assert levels == [level for level in ("debug", "info", "error") if LOG_LEVELS.index(level) >= LOG_LEVELS.index("info")]


async def test_an_unknown_log_level_is_invalid_params(client: CoreClient) -> None:
    await client.initialize()
    assert (await client.rejected("logging/setLevel", {"level": "loud"})).code is ErrorCode.INVALID_PARAMS


@given(level=st.one_of(st.text(max_size=12).filter(lambda text: text not in LOG_LEVELS), st.integers(),
                       st.sampled_from([level.upper() for level in LOG_LEVELS]), st.none(), st.booleans()))
@settings(max_examples=40, deadline=None)
async def test_a_bad_log_level_is_refused_with_the_levels_named_not_python_internals(level) -> None:
    """A level outside the enum is -32602 saying which levels there are; cattrs' own wording for a Literal
    ("unknown error (DEBUG not in literal typing.Literal[...])") is Python's, not the protocol's."""
    client = CoreClient(build_demo_server(), RecordingPeer())
    await client.initialize()
    rejection = await client.rejected("logging/setLevel", {"level": level})
    assert rejection.code == ErrorCode.INVALID_PARAMS
    assert "$.level" in rejection.message
    if level is not None:  # null is a missing level (cattrs: "required field missing")
        assert "expected one of 'debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'" \
            in rejection.message, rejection.message
    assert "typing" not in rejection.message and "unknown error" not in rejection.message, rejection.message
    assert all("typing" not in problem for problem in rejection.data["problems"]), rejection.data


def build_cancellable_server() -> tuple[McpServer, dict[str, bool]]:
    server = McpServer("cancel-test", "1")
    trace = {"started": False, "finished": False}

    @server.tool()
    async def long_job(ctx: ToolContext) -> str:
        trace["started"] = True
        await asyncio.sleep(30)
        trace["finished"] = True  # must never run: the cancellation lands in the sleep
        return "done"

    return server, trace


async def test_cancellation_really_stops_a_running_tool() -> None:
    server, trace = build_cancellable_server()
    client = CoreClient(server)
    await client.initialize()
    call = asyncio.ensure_future(client.request("tools/call", {"name": "long_job", "arguments": {}}, key=41))
    while not trace["started"]:
        await asyncio.sleep(0)
    await client.notify("notifications/cancelled", {"requestId": 41, "reason": "user pressed stop"})
    outcome = await asyncio.wait_for(call, 5)
    assert isinstance(outcome, Rejection)
    assert outcome.code is ErrorCode.REQUEST_CANCELLED
    await asyncio.sleep(0.01)
    assert trace["finished"] is False


async def test_cancelling_another_request_id_changes_nothing() -> None:
    server, trace = build_cancellable_server()
    client = CoreClient(server)
    await client.initialize()
    call = asyncio.ensure_future(client.request("tools/call", {"name": "long_job", "arguments": {}}, key="a"))
    while not trace["started"]:
        await asyncio.sleep(0)
    await client.notify("notifications/cancelled", {"requestId": "b"})
    await client.notify("notifications/cancelled", {"requestId": True})  # malformed: ignored
    await asyncio.sleep(0.01)
    assert not call.done()
    await client.notify("notifications/cancelled", {"requestId": "a"})
    assert (await asyncio.wait_for(call, 5)).code is ErrorCode.REQUEST_CANCELLED


async def test_a_cancellation_handled_before_the_request_runs_still_stops_it() -> None:
    """An adapter admits a request and schedules it; the cancel right behind it is handled first."""
    server, trace = build_cancellable_server()
    client = CoreClient(server)
    await client.initialize()
    work = client.session.begin_request("tools/call", {"name": "long_job", "arguments": {}}, request_key="c1",
                                        trace_id="t-c1")
    await client.notify("notifications/cancelled", {"requestId": "c1"})
    outcome = await asyncio.wait_for(work, 5)
    assert isinstance(outcome, Rejection) and outcome.code is ErrorCode.REQUEST_CANCELLED
    assert trace["started"] is False
    assert await client.ok("ping", key="c1") == {}  # the key is free again: answered, not cancelled
