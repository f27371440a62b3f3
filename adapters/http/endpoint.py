"""The MCP endpoint: picks the era from the `MCP-Protocol-Version` header and hands over.

A header naming a handshake version, or no header at all, means the handshake-era transport
(sessions). Anything else — 2026-07-28, or a version we have never heard of — goes to the 2026 path,
which answers with the precise error (-32022 for a header naming no version it serves, then -32602
or -32020). Routing never looks at the method name, so an `initialize` sent the 2026 way gets 2026's
answer (404, method not found).
"""

from __future__ import annotations

from typing import Awaitable

from hexmcp.core import McpServer, versions

from ..held_open import HeldOpen
from .asgi import Receive, Scope, Send
from .config import HttpConfig
from .handshake_era import HandshakeEraTransport
from .request import REQUEST, HttpRequest
from .sessions import SessionStore
from .stateless_era import StatelessEraTransport

_HANDSHAKE = {v.encode(): v for v in versions.HANDSHAKE_VERSIONS}


class McpEndpoint:
    def __init__(self, server: McpServer, config: HttpConfig) -> None:
        self.sessions = SessionStore(server, config)
        # GET streams and subscriptions/listen streams: one count, whichever era opened them.
        self.streams = HeldOpen(what="open streams", per_client=config.max_streams_per_client,
                                total=config.max_streams, idle_timeout_s=config.stream_idle_timeout_s)
        self.handshake_era = HandshakeEraTransport(server, config, self.sessions, self.streams)
        self.stateless_era = StatelessEraTransport(server, config, self.streams)

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        """A POST's body has been read already (`body.BodyBuffer`); GET and DELETE carry none. Returns the
        era's awaitable rather than awaiting it: the choice costs no coroutine frame of its own."""
        request: HttpRequest = scope[REQUEST]  # the app put it there (`request.request_of`)
        raw = request.header(b"mcp-protocol-version")
        if raw is None:
            return self.handshake_era.handle(request, receive, send, None)
        version = _HANDSHAKE.get(raw) or _HANDSHAKE.get(raw.strip())  # a copy only for a padded value
        if version is not None:
            return self.handshake_era.handle(request, receive, send, version)
        return self.stateless_era.handle(request, receive, send)
