"""`McpServer.add_method`: an extension method is served like an MCP one, on the eras it names."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from hexmcp.core import Call, ErrorCode, McpServer, Ok
from hexmcp.core.handlers import ROUTES

from ..support.peer import CoreClient, stateless_meta

pytestmark = pytest.mark.anyio


async def _served(client: CoreClient, params: dict[str, Any]) -> dict[str, Any]:
    # Straight to the session: CoreClient checks results against the MCP schema, which has no models/list.
    outcome = await client.session.handle_request("models/list", params, request_key=1, trace_id="t-1")
    assert isinstance(outcome, Ok), outcome
    return outcome.result


@attrs.frozen(kw_only=True)
class ModelsParams:
    family: str


async def _list_models(session: Any, params: ModelsParams, call: Call) -> dict[str, Any]:
    return {"models": [f"{params.family}-small", f"{params.family}-large"], "version": call.version}


@pytest.fixture
def extended(demo_server: McpServer) -> McpServer:
    demo_server.add_method("models/list", _list_models, params=ModelsParams)
    return demo_server


async def test_an_extension_method_is_served_on_a_handshake_session(extended: McpServer) -> None:
    client = CoreClient(extended)
    await client.initialize()
    result = await _served(client, {"family": "qwen"})
    assert result["models"] == ["qwen-small", "qwen-large"]


async def test_an_extension_method_is_served_statelessly(extended: McpServer) -> None:
    result = await _served(CoreClient(extended), {"family": "qwen", "_meta": stateless_meta()})
    assert result["models"] == ["qwen-small", "qwen-large"] and result["resultType"] == "complete"


async def test_an_extension_methods_params_are_checked_before_it_runs(extended: McpServer) -> None:
    client = CoreClient(extended)
    await client.initialize()
    assert (await client.rejected("models/list", {})).code is ErrorCode.INVALID_PARAMS


async def test_a_handshake_only_extension_is_not_found_on_2026(demo_server: McpServer) -> None:
    demo_server.add_method("models/list", _list_models, params=ModelsParams, stateless=False)
    rejection = await CoreClient(demo_server).rejected("models/list", {"family": "x", "_meta": stateless_meta()})
    assert rejection.code is ErrorCode.METHOD_NOT_FOUND


@pytest.mark.parametrize("method", sorted(ROUTES))
def test_mcp_methods_cannot_be_replaced(demo_server: McpServer, method: str) -> None:
    with pytest.raises(ValueError, match="MCP method"):
        demo_server.add_method(method, _list_models)


async def test_other_servers_do_not_see_the_extension(extended: McpServer, demo_server: McpServer) -> None:
    plain = CoreClient(McpServer("plain", "1"))
    await plain.initialize()
    assert (await plain.rejected("models/list", {"family": "x"})).code is ErrorCode.METHOD_NOT_FOUND


async def test_a_session_keeps_the_methods_it_was_opened_with(demo_server: McpServer) -> None:
    before = CoreClient(demo_server)
    await before.initialize()
    demo_server.add_method("models/list", _list_models, params=ModelsParams)
    assert (await before.rejected("models/list", {"family": "x"})).code is ErrorCode.METHOD_NOT_FOUND
    after = CoreClient(demo_server)
    await after.initialize()
    assert (await _served(after, {"family": "x"}))["models"] == ["x-small", "x-large"]
