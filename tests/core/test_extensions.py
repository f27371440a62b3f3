"""Extension methods (McpServer.add_method): routed on every version, advertised, cancellable, and
unable to shadow an MCP method."""

from __future__ import annotations

import asyncio

import pytest

from hexmcp.core import ErrorCode, McpServer, Ok, PackErrorCode, ProtocolError, versions
from hexmcp.core.handlers import ROUTES

from ..support.peer import CoreClient, RecordingPeer, stateless_meta

pytestmark = pytest.mark.anyio

SLOW_DOWN = PackErrorCode(value="x_rate_limited", jsonrpc_code=-32002, http_status=429)  # a pack's own code


async def _answer(client: CoreClient, method: str, params: dict) -> dict:
    """The result of a method the MCP schemas do not know (CoreClient.ok checks results against them)."""
    outcome = await client.session.handle_request(method, params, request_key="ext", trace_id="t-ext")
    assert isinstance(outcome, Ok), outcome
    return outcome.result


def _server() -> McpServer:
    server = McpServer("ext", "1")

    async def echo(params, ctx):
        if params.get("fail"):
            raise ProtocolError(SLOW_DOWN, "slow down", {"attempts": 3})
        if params.get("wait"):
            await asyncio.Event().wait()
        return {"echo": params.get("text"), "session": ctx.session_id}

    server.add_method("x/echo", echo, capability={"version": 1})
    return server


async def test_an_extension_is_advertised_and_answered_on_handshake_versions() -> None:
    client = CoreClient(_server())
    result = await client.initialize()
    assert result["capabilities"]["experimental"] == {"x/echo": {"version": 1}}
    assert await _answer(client, "x/echo", {"text": "hi"}) == {"echo": "hi", "session": "test"}


async def test_an_extension_is_answered_statelessly_and_listed_by_discover() -> None:
    client = CoreClient(_server())
    discovered = await client.ok("server/discover", {"_meta": stateless_meta()})
    assert "x/echo" in discovered["capabilities"]["experimental"]
    answer = await _answer(client, "x/echo", {"text": "hi", "_meta": stateless_meta()})
    assert answer["echo"] == "hi" and answer["resultType"] == "complete"


async def test_a_rejection_keeps_its_semantic_code_and_data() -> None:
    client = CoreClient(_server())
    await client.initialize()
    rejection = await client.session.handle_request("x/echo", {"fail": True}, request_key=9, trace_id="t")
    assert rejection.code is SLOW_DOWN and rejection.data == {"attempts": 3}


async def test_without_extensions_nothing_is_advertised_and_unknown_methods_stay_unknown() -> None:
    client = CoreClient(McpServer("plain", "1"))
    result = await client.initialize(versions.LATEST_HANDSHAKE_VERSION)
    assert "experimental" not in result["capabilities"]
    assert (await client.rejected("x/echo", {})).code is ErrorCode.METHOD_NOT_FOUND


async def test_an_extension_cannot_replace_an_mcp_method() -> None:
    with pytest.raises(ValueError, match="tools/list"):
        McpServer("x", "1").add_method("tools/list", lambda params, ctx: None)


async def test_cancellation_stops_a_running_extension() -> None:
    server = _server()
    client = CoreClient(server, RecordingPeer())
    await client.initialize()
    pending = asyncio.ensure_future(client.session.handle_request("x/echo", {"wait": True}, request_key=7, trace_id="t"))
    await asyncio.sleep(0)
    await client.notify("notifications/cancelled", {"requestId": 7})
    outcome = await pending
    assert outcome.code is ErrorCode.REQUEST_CANCELLED


@pytest.mark.parametrize("method", sorted(ROUTES))
def test_no_mcp_method_can_be_replaced(method: str) -> None:
    with pytest.raises(ValueError, match="MCP method"):
        McpServer("x", "1").add_method(method, _echo_models)


async def _echo_models(params, ctx):
    return {"models": [f"{params['family']}-small"]}


async def test_a_handshake_only_extension_is_not_found_on_2026() -> None:
    server = McpServer("x", "1")
    server.add_method("models/list", _echo_models, stateless=False)
    rejection = await CoreClient(server).rejected("models/list", {"family": "x", "_meta": stateless_meta()})
    assert rejection.code is ErrorCode.METHOD_NOT_FOUND


async def test_other_servers_do_not_see_the_extension() -> None:
    _server()
    plain = CoreClient(McpServer("plain", "1"))
    await plain.initialize()
    assert (await plain.rejected("x/echo", {"text": "x"})).code is ErrorCode.METHOD_NOT_FOUND


async def test_a_session_keeps_the_methods_it_was_opened_with() -> None:
    server = McpServer("x", "1")
    before = CoreClient(server)
    await before.initialize()
    server.add_method("models/list", _echo_models)
    assert (await before.rejected("models/list", {"family": "x"})).code is ErrorCode.METHOD_NOT_FOUND
    after = CoreClient(server)
    await after.initialize()
    assert (await _answer(after, "models/list", {"family": "x"}))["models"] == ["x-small"]
