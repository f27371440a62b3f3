"""An argument refusal as the official SDK client sees it, held to the negotiated version's form.

Up to 2025-06-18 a tool's arguments refused (by its input schema or its own checks) are a JSON-RPC -32602,
which the SDK raises as `MCPError`; from 2025-11-25 on (SEP-1303) they are a tool execution error, a result
with `isError` whose text is the refusal's message and its eventId. Either way the message comes back, so a
test states once what is refused and learns it on every version.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from hexmcp.core import versions
from hexmcp.core.meta import META_ERROR_CODE, META_EVENT_ID


async def refused_arguments(session: ClientSession, tool: str, arguments: dict[str, Any]) -> str:
    """The refusal's message (without the eventId the result form appends)."""
    version = session.protocol_version
    assert version is not None, "initialize first"
    if not versions.features(version).argument_errors_as_results:
        with pytest.raises(MCPError) as raised:
            await session.call_tool(tool, arguments)
        assert raised.value.error.code == types.INVALID_PARAMS, raised.value.error
        return raised.value.error.message
    result = await session.call_tool(tool, arguments)
    assert result.is_error, result
    [block] = result.content
    meta = result.meta or {}
    suffix = f" (eventId {meta[META_EVENT_ID]})"
    assert block.text.endswith(suffix), block.text
    assert meta[META_ERROR_CODE] == "invalid_params", meta
    return block.text[:-len(suffix)]
