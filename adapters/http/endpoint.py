"""The MCP endpoint: picks the era from the `MCP-Protocol-Version` header and hands over.

A header naming a handshake version, or no header at all, means the handshake-era transport
(sessions). Anything else — 2026-07-28, or a version we have never heard of — goes to the 2026 path,
which answers with the precise error (-32602, -32020 or -32022). Routing never looks at the method
name, so an `initialize` sent the 2026 way gets 2026's answer (404, method not found).
"""

from __future__ import annotations

from hexmcp.core import ErrorCode, McpServer, versions

from .asgi import Receive, Scope, Send, header, BodyTooLarge, ClientGone
from .config import HttpConfig
from .legacy import LegacyTransport
from .modern import ModernTransport
from .sessions import SessionStore
from .status import refuse

_HANDSHAKE = {v.encode(): v for v in versions.HANDSHAKE_VERSIONS}


class McpEndpoint:
    def __init__(self, server: McpServer, config: HttpConfig) -> None:
        self.sessions = SessionStore(server, config)
        self.legacy = LegacyTransport(server, config, self.sessions)
        self.modern = ModernTransport(server, config)
        self._max_body = config.max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = header(scope, b"mcp-protocol-version")
        try:
            if raw is None:
                await self.legacy.handle(scope, receive, send, None)
                return
            version = _HANDSHAKE.get(raw.strip())
            if version is not None:
                await self.legacy.handle(scope, receive, send, version)
            else:
                await self.modern.handle(scope, receive, send)
        except BodyTooLarge:
            await refuse(send, ErrorCode.PAYLOAD_TOO_LARGE,
                         f"Payload too large: the limit is {self._max_body} bytes")
        except ClientGone:
            return
