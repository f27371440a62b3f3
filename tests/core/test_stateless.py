"""2026-07-28: every request carries its version and capabilities in `_meta`; no handshake, no session."""

from __future__ import annotations

import pytest

from hexmcp.core import ErrorCode, McpServer, versions
from hexmcp.core.models import CACHEABLE_RESULTS
from hexmcp.core.handlers import ROUTES
from hexmcp.core.meta import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, META_SERVER_INFO

from ..support.peer import CoreClient, stateless_meta

pytestmark = pytest.mark.anyio

STATELESS = versions.LATEST_VERSION
CACHEABLE_METHODS = ("server/discover", "tools/list", "resources/list", "resources/templates/list", "prompts/list")


async def test_a_stateless_request_is_served_with_no_handshake(client: CoreClient) -> None:
    result = await client.ok("tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": stateless_meta()})
    assert result["resultType"] == "complete"
    assert result["content"][0]["text"] == "hi"
    assert result["_meta"][META_SERVER_INFO]["name"] == client.session.server.info.name


@pytest.mark.parametrize("method", CACHEABLE_METHODS)
async def test_cacheable_results_carry_cache_hints(client: CoreClient, demo_server: McpServer, method: str) -> None:
    result = await client.ok(method, {"_meta": stateless_meta()})
    assert result["resultType"] == "complete"
    assert result["ttlMs"] == demo_server.options.cache_ttl_ms
    assert result["cacheScope"] == demo_server.options.cache_scope


async def test_resources_read_is_cacheable(client: CoreClient) -> None:
    result = await client.ok("resources/read", {"uri": "demo://greeting", "_meta": stateless_meta()})
    assert {"ttlMs", "cacheScope"} <= set(result)


async def test_a_tool_call_is_not_cacheable(client: CoreClient) -> None:
    result = await client.ok("tools/call", {"name": "echo", "arguments": {"text": "x"}, "_meta": stateless_meta()})
    assert "ttlMs" not in result and "cacheScope" not in result


async def test_discover_lists_every_supported_version(client: CoreClient) -> None:
    result = await client.ok("server/discover", {"_meta": stateless_meta()})
    assert result["supportedVersions"] == list(versions.SUPPORTED_VERSIONS)


@pytest.mark.parametrize("requested", ["1999-01-01", "2026-13-45", 20260728])
async def test_an_unsupported_version_is_refused_with_what_is_supported(client: CoreClient, requested: object) -> None:
    rejection = await client.rejected("tools/list", {"_meta": stateless_meta(requested)})
    assert rejection.code is ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
    assert rejection.data["requested"] == str(requested)
    assert rejection.data["supported"] == list(versions.SUPPORTED_VERSIONS)


async def test_capabilities_must_be_an_object(client: CoreClient) -> None:
    meta = {META_PROTOCOL_VERSION: STATELESS, META_CLIENT_CAPABILITIES: "all of them"}
    rejection = await client.rejected("tools/list", {"_meta": meta})
    assert rejection.code is ErrorCode.INVALID_PARAMS


@pytest.mark.parametrize("method", sorted(m for m, r in ROUTES.items() if not r.stateless and m != "initialize"))
async def test_handshake_only_methods_are_not_found(client: CoreClient, method: str) -> None:
    params = {"level": "info", "uri": "demo://greeting", "_meta": stateless_meta()}
    rejection = await client.rejected(method, params)
    assert rejection.code is ErrorCode.METHOD_NOT_FOUND


async def test_ping_and_set_level_are_among_the_methods_gone_in_2026() -> None:
    gone = {m for m, r in ROUTES.items() if not r.stateless}
    assert {"ping", "logging/setLevel"} <= gone


async def test_stateless_requests_do_not_touch_the_session_lifecycle(client: CoreClient) -> None:
    await client.ok("tools/list", {"_meta": stateless_meta()})
    assert client.session.version is None
    assert (await client.rejected("tools/list")).code is ErrorCode.INVALID_REQUEST


def test_cacheable_results_are_the_listed_ones() -> None:
    assert {cls.__name__ for cls in CACHEABLE_RESULTS} >= {"ListToolsResult", "DiscoverResult", "ReadResourceResult"}
