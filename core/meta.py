"""The `_meta` keys the core reads and writes: one public home, so adapters and tools name them from here.

2026-07-28 requests carry their protocol version, client capabilities, client info and log level in
`params._meta` instead of a handshake; results carry the server's info back. Tool failures carry the
eventId and the semantic error code under hexmcp's own prefix.
"""

from __future__ import annotations

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"  # sent by hexmcp.client on 2026-07-28 requests
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_EVENT_ID = "io.hexmcp/eventId"
META_ERROR_CODE = "io.hexmcp/errorCode"
# An argument refusal answered as a tool result (SEP-1303): the `data` a -32602 would have carried (its path).
META_ERROR_DATA = "io.hexmcp/errorData"


def request_meta(params: object) -> dict[str, object]:
    """A request's `params._meta` when it is an object, else an empty one."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}
