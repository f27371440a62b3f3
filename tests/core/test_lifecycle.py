"""The handshake lifecycle and version negotiation, driven in memory."""

from __future__ import annotations

import pytest

from hexmcp.core import ErrorCode, lifecycle, versions
from hexmcp.core.handlers import ROUTES

from ..support.peer import CoreClient, initialize_params

pytestmark = pytest.mark.anyio


async def test_requests_before_initialize_are_rejected_naming_the_state(client: CoreClient) -> None:
    rejection = await client.rejected("tools/list")
    assert rejection.code is ErrorCode.INVALID_REQUEST
    assert rejection.data == {"state": lifecycle.State.AWAITING_INITIALIZE.value}
    assert rejection.wire_data()["eventId"] == rejection.event_id


async def test_ping_is_served_before_initialize(client: CoreClient) -> None:
    assert await client.ok("ping") == {}


async def test_initialize_twice_is_rejected(client: CoreClient) -> None:
    await client.initialize()
    rejection = await client.rejected("initialize", initialize_params(versions.LATEST_HANDSHAKE_VERSION))
    assert rejection.code is ErrorCode.INVALID_REQUEST


async def test_initialize_before_initialized_notification_is_rejected(client: CoreClient) -> None:
    await client.ok("initialize", initialize_params(versions.LATEST_HANDSHAKE_VERSION))
    assert client.session.state is lifecycle.State.INITIALIZING
    rejection = await client.rejected("initialize", initialize_params(versions.LATEST_HANDSHAKE_VERSION))
    assert rejection.code is ErrorCode.INVALID_REQUEST


async def test_requests_pipelined_before_initialized_are_served(client: CoreClient) -> None:
    await client.ok("initialize", initialize_params(versions.LATEST_HANDSHAKE_VERSION))
    assert (await client.ok("tools/list"))["tools"]
    await client.notify("notifications/initialized")
    assert client.session.state is lifecycle.State.READY


@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
async def test_a_handshake_version_is_echoed(client: CoreClient, version: str) -> None:
    result = await client.initialize(version)
    assert result["protocolVersion"] == version
    assert client.session.version == version


@pytest.mark.parametrize("requested", [*versions.STATELESS_VERSIONS, "1999-01-01", "not-a-version"])
async def test_other_versions_fall_back_to_the_latest_handshake_version(client: CoreClient, requested: str) -> None:
    result = await client.initialize(requested)
    assert result["protocolVersion"] == versions.LATEST_HANDSHAKE_VERSION


@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
async def test_initialize_result_describes_the_server(client: CoreClient, version: str) -> None:
    result = await client.initialize(version)
    assert result["serverInfo"]["name"] == client.session.server.info.name
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts", "logging"}
    assert ("completions" in result["capabilities"]) == (version >= versions.V2025_03_26)


async def test_initialize_with_malformed_params_is_invalid_params(client: CoreClient) -> None:
    rejection = await client.rejected("initialize", {"protocolVersion": 20241105, "capabilities": {}})
    assert rejection.code is ErrorCode.INVALID_PARAMS


@pytest.mark.parametrize("bad_params", [None, {"capabilities": {}}, {"protocolVersion": 20241105, "capabilities": {}}])
async def test_a_rejected_initialize_negotiates_nothing_and_may_be_retried(client: CoreClient, bad_params) -> None:
    assert (await client.rejected("initialize", bad_params)).code is ErrorCode.INVALID_PARAMS
    assert client.session.state is lifecycle.State.AWAITING_INITIALIZE
    assert client.session.version is None
    rejection = await client.rejected("tools/list")  # not served at a version nobody agreed on
    assert rejection.data == {"state": lifecycle.State.AWAITING_INITIALIZE.value}
    result = await client.initialize(versions.V2024_11_05)
    assert result["protocolVersion"] == client.session.version == versions.V2024_11_05
    assert client.session.state is lifecycle.State.READY


def test_only_an_initializing_session_goes_back_when_initialize_is_rejected() -> None:
    for state in lifecycle.State:
        verdict, after = lifecycle.step(state, lifecycle.Event.INITIALIZE_REJECTED)
        if state is lifecycle.State.INITIALIZING:
            assert (verdict, after) == (lifecycle.Verdict.ACCEPT, lifecycle.State.AWAITING_INITIALIZE)
        else:
            assert (verdict, after) == (lifecycle.Verdict.IGNORE, state)


def test_the_lifecycle_table_covers_every_state_and_event() -> None:
    assert set(lifecycle.TABLE) == {(state, event) for state in lifecycle.State for event in lifecycle.Event}


async def test_unknown_method_is_method_not_found(client: CoreClient) -> None:
    await client.initialize()
    rejection = await client.rejected("tools/frobnicate")
    assert rejection.code is ErrorCode.METHOD_NOT_FOUND


@pytest.mark.parametrize("method", sorted(m for m, r in ROUTES.items() if not r.handshake))
async def test_stateless_only_methods_are_not_found_on_handshake_versions(client: CoreClient, method: str) -> None:
    await client.initialize()
    rejection = await client.rejected(method, {"notifications": {}})
    # The negotiated version has no such method; before a handshake, -32602 names the missing `_meta`.
    assert rejection.code is ErrorCode.METHOD_NOT_FOUND


async def test_a_closed_session_rejects_everything(client: CoreClient) -> None:
    await client.initialize()
    await client.session.close()
    for method in ("ping", "tools/list"):
        assert (await client.rejected(method)).code is ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize("state", list(lifecycle.State))
def test_closing_is_a_table_event_that_ends_in_closed_from_every_state(state: lifecycle.State) -> None:
    verdict, after = lifecycle.step(state, lifecycle.Event.CLOSE)
    assert after is lifecycle.State.CLOSED
    assert verdict is (lifecycle.Verdict.IGNORE if state is lifecycle.State.CLOSED else lifecycle.Verdict.ACCEPT)


async def test_closing_before_initialize_closes_too(client: CoreClient) -> None:
    await client.session.close()
    assert client.session.state is lifecycle.State.CLOSED
    assert "closed" in (await client.rejected("initialize", {})).message
