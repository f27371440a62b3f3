"""`WsConfig`: every knob of the WebSocket adapter, validated once at construction.

Defaults match the HTTP adapter's safe ones (loopback names only, no token unless given) and bound
everything a client can grow: frame size, queued output, connections, requests in flight. Keepalive
pings are uvicorn's job (its `ws_ping_*` options); `uvicorn_options()` hands it the matching values,
so the one config object describes both layers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from ..settings import positive, string_tuple

if TYPE_CHECKING:
    from hexmcp.adapters.http import HttpConfig

MIB = 1024 * 1024


@attrs.frozen(kw_only=True)
class WsConfig:
    path: str = "/ws"
    max_frame_bytes: int = attrs.field(default=4 * MIB, validator=positive)
    """Largest inbound message; a bigger one closes the connection with 1009."""
    send_queue_messages: int = attrs.field(default=256, validator=positive)
    """Outbound messages queued for a client that is not reading; one more closes it with 1013."""
    send_queue_chars: int = attrs.field(default=16 * MIB, validator=positive)
    """The same bound in characters of JSON text (one message larger than this alone is still sent)."""
    ping_interval_s: float | None = attrs.field(default=20.0, validator=positive)
    """uvicorn pings an idle client this often (None: never)."""
    ping_timeout_s: float | None = attrs.field(default=20.0, validator=positive)
    """...and closes it with 1011 when the pong is this late."""
    close_timeout_s: float = attrs.field(default=10.0, validator=positive)
    """How long we try to deliver our close frame to a client whose socket is full."""
    shutdown_grace_s: float = attrs.field(default=10.0, validator=positive)
    """On shutdown, how long in-flight requests may run before they are cancelled."""
    auth_token: str | None = None
    """When set, the handshake needs `Authorization: Bearer <token>` (else HTTP 401)."""
    bound_host: str = "127.0.0.1"
    """The interface served; its name is an allowed Host/Origin besides the loopback names."""
    allowed_hosts: tuple[str, ...] = attrs.field(default=(), converter=string_tuple)
    """Extra Host values (`name` or `name:port`; `*` disables the check), as in HttpConfig."""
    allowed_origins: tuple[str, ...] = attrs.field(default=(), converter=string_tuple)
    """Extra Origin values (`scheme://host[:port]`; `*` disables the check), as in HttpConfig."""
    max_connections: int = attrs.field(default=1024, validator=positive)
    """Open sockets at once; the handshake beyond it gets HTTP 503."""
    max_connections_per_client: int = attrs.field(default=128, validator=positive)
    """Open sockets of one client (`client_identity`, an IPv6 address counted by its /64) at once; its handshake
    beyond it gets HTTP 503, so one client cannot take every place of `max_connections`. When those are all
    taken, a client below its fair share is admitted by closing the largest holder's oldest idle socket (1013)."""
    idle_timeout_s: float | None = attrs.field(default=1800.0, validator=positive)
    """A socket that sent nothing for this long (each request is answered, so a client's pings count) and has
    no request in flight is closed with 1000 (None: never; uvicorn's pings only tell a dead client apart)."""
    max_in_flight: int = attrs.field(default=512, validator=positive)
    """Requests one socket may have running; beyond it each gets a -32005 error frame."""
    client_request_timeout_s: float = attrs.field(default=300.0, validator=positive)
    """How long a server-to-client request (sampling, elicitation) waits for the client's answer."""
    per_message_deflate: bool = True

    def __attrs_post_init__(self) -> None:
        if not self.path.startswith("/") or (self.path.endswith("/") and self.path != "/"):
            raise ValueError(f"WsConfig.path must start and not end with '/', got {self.path!r}")
        if self.auth_token is not None and (not self.auth_token or self.auth_token != self.auth_token.strip()):
            raise ValueError("WsConfig.auth_token must be non-empty and have no surrounding whitespace")

    @classmethod
    def from_http(cls, http: HttpConfig, **overrides: Any) -> WsConfig:
        """The same token and Host/Origin rules as the HTTP app the socket is mounted on."""
        shared = dict(auth_token=http.auth_token, bound_host=http.host, allowed_hosts=http.allowed_hosts,
                      allowed_origins=(*http.allowed_origins, *http.cors_origins),
                      client_request_timeout_s=http.client_request_timeout_s, shutdown_grace_s=http.drain_timeout_s,
                      max_connections=http.max_streams, max_connections_per_client=http.max_streams_per_client,
                      idle_timeout_s=http.stream_idle_timeout_s)
        shared.update(overrides)
        return cls(**shared)

    def uvicorn_options(self) -> dict[str, Any]:
        """Options for `uvicorn.Config` so the server enforces the same frame size and keepalive.

        uvicorn (websockets-sansio implementation) closes an oversize message with 1009 before it is
        buffered whole, and a client that misses a pong with 1011; we check the size again ourselves in
        case the server was configured with a larger `ws_max_size`.
        """
        return dict(ws="websockets-sansio", ws_max_size=self.max_frame_bytes, ws_ping_interval=self.ping_interval_s,
                    ws_ping_timeout=self.ping_timeout_s, ws_per_message_deflate=self.per_message_deflate)
