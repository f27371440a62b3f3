"""`HttpConfig`: every knob of the HTTP adapter, with safe defaults, validated once at construction.

Defaults are the safe ones: loopback bind, Host/Origin checks on, CORS off, bounded bodies, requests,
sessions and replay buffers. The CLI (`hexmcp serve`) and the conformance fixture server both build
one of these; nothing else in the adapter reads flags or the environment.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..settings import port_number, positive, string_tuple

MIB = 1024 * 1024


@attrs.frozen(kw_only=True)
class HttpConfig:
    host: str = "127.0.0.1"
    """Interface to bind. Loopback by default: exposing the server is an explicit decision."""
    port: int = attrs.field(default=8090, validator=port_number)
    path: str = "/mcp"
    """The MCP endpoint; REST calls live under `{path}/{method}`."""
    stateless: bool = False
    """Serve handshake versions without sessions: every POST stands alone (load-balancer friendly)."""
    auth_token: str | None = None
    """When set, every request except /health needs `Authorization: Bearer <token>`."""
    auth_token_name: str = "token"
    """The identity of clients presenting `auth_token` (rate limits, tasks, audit): `token:<name>`."""
    oauth: Any = None
    """An `auth.config.OAuthConfig`: accept OAuth 2.1 access tokens from that issuer for this resource."""
    trusted_proxies: tuple[str, ...] = attrs.field(default=(), converter=string_tuple)
    """Addresses or CIDRs of reverse proxies whose `X-Forwarded-For` names the client; others' is ignored."""
    allowed_hosts: tuple[str, ...] = attrs.field(default=(), converter=string_tuple)
    """Extra Host header values (`name` or `name:port`; `*` disables the check). Loopback is always allowed."""
    allowed_origins: tuple[str, ...] = attrs.field(default=(), converter=string_tuple)
    """Extra Origin values (`scheme://host[:port]`; `*` disables the check). Loopback origins on this server's
    own port are always allowed (ADR 1151)."""
    cors_origins: tuple[str, ...] = attrs.field(default=(), converter=string_tuple)
    """Origins that get CORS headers (browser clients). Empty: CORS off."""
    max_body_bytes: int = attrs.field(default=4 * MIB, validator=positive)
    body_timeout_s: float = attrs.field(default=30.0, validator=[attrs.validators.instance_of((int, float)), positive])
    """Deadline for receiving a POST's whole body (408 beyond it). Bodies are read before a request
    takes a concurrency slot, so a client that stalls mid-upload holds nothing but its own connection."""
    request_timeout_s: float | None = attrs.field(default=120.0, validator=positive)
    """Deadline for one request (not for GET streams or subscriptions/listen, which are long-lived)."""
    max_concurrent_requests: int = attrs.field(default=256, validator=positive)
    """POSTs served at once; beyond it 503 + Retry-After (JSON-RPC -32005)."""
    max_sessions: int = attrs.field(default=10_000, validator=positive)
    session_idle_timeout_s: float = attrs.field(default=1800.0, validator=positive)
    max_streams: int = attrs.field(default=1024, validator=positive)
    """Long-lived streams (GET and subscriptions/listen, both eras together) open at once."""
    max_streams_per_client: int = attrs.field(default=128, validator=positive)
    """Long-lived streams one client (`client_identity`, an IPv6 address counted by its /64) holds open at once;
    beyond it 503 + Retry-After, so one client cannot take every place of `max_streams`; when `max_streams` is
    full, a client below its fair share is admitted by closing the largest holder's oldest idle stream. The
    WebSocket endpoint mounted on this app caps one client's sockets with the same number
    (`WsConfig.from_http`)."""
    stream_idle_timeout_s: float | None = attrs.field(default=1800.0, validator=positive)
    """A long-lived stream (GET, subscriptions/listen), or a WebSocket on this app (`WsConfig.from_http`), that
    carried nothing for this long and has no request in flight is closed (a GET stream can be resumed, a
    listen sent again); the same default as `session_idle_timeout_s`. None: never (ADR 1214)."""
    replay_events: int = attrs.field(default=256, validator=positive)
    """SSE events kept per stream for `Last-Event-ID` resumption."""
    replay_bytes_per_session: int = attrs.field(default=2 * MIB, validator=positive)
    """Bytes of SSE events kept for resumption per session, all its streams together; the oldest go first.
    An event larger than this (or than either cap below) is sent live but not kept."""
    replay_bytes_per_client: int = attrs.field(default=16 * MIB, validator=positive)
    """The same, for all the sessions of one client (`client_identity`) together."""
    replay_bytes_total: int = attrs.field(default=256 * MIB, validator=positive)
    """The same, for the whole server."""
    replay_retention_s: float = attrs.field(default=60.0, validator=[attrs.validators.instance_of((int, float)),
                                                                      positive])
    """How long an SSE event stays kept for `Last-Event-ID` resumption: resuming is for a connection that
    broke moments ago, and what a burst left behind must not stay until its sessions idle out."""
    max_sessions_per_client: int = attrs.field(default=128, validator=positive)
    """Sessions one client (`client_identity`) may hold; a new one beyond it replaces that client's least
    recently used idle session, or is refused with 503 + Retry-After when all of them are busy."""
    max_batch_messages: int = attrs.field(default=64, validator=positive)
    """Messages in one JSON-RPC batch (2025-03-26); a longer batch is refused whole with 400 (-32600).
    Each request in a batch also takes a concurrency slot (`max_concurrent_requests`) or is answered -32005."""
    max_head_bytes: int = attrs.field(default=32 * 1024, validator=positive)
    """Largest request head (request line and headers); beyond it 431 Request Header Fields Too Large and
    the connection is closed, without reading the rest of the head."""
    sse_retry_ms: int = attrs.field(default=1000, validator=positive)
    keepalive_s: float = attrs.field(default=15.0, validator=positive)
    """Comment lines on idle long-lived streams, so proxies do not cut them."""
    head_timeout_s: float | None = attrs.field(default=5.0, validator=positive)
    """Deadline for a request head (request line and headers), from the connection opening or the first
    byte of a later request; the connection is closed beyond it (slowloris). None: no deadline."""
    max_connections_per_address: int = attrs.field(default=256, validator=positive)
    """Open connections (WebSockets included) from one client IP; beyond it 503 + Retry-After, then close."""
    max_connections: int | None = attrs.field(default=None, validator=positive)
    """Open connections in total; None: the open-files limit (raised to the hard limit at start-up) minus
    `descriptors.HEADROOM`. Beyond it 503 + Retry-After, then close."""
    client_request_timeout_s: float = attrs.field(default=300.0, validator=positive)
    """How long a server-to-client request (sampling, elicitation) waits for the client's answer."""
    drain_timeout_s: float = attrs.field(default=10.0, validator=[attrs.validators.instance_of((int, float)), positive])
    """On SIGTERM, how long requests and WebSocket calls already received may run before they are cancelled
    (the listening socket is closed at once, /health says "draining"). Keep it below the orchestrator's grace
    period (Kubernetes' terminationGracePeriodSeconds)."""

    def __attrs_post_init__(self) -> None:
        if not self.path.startswith("/") or self.path.endswith("/"):
            raise ValueError(f"HttpConfig.path must start and not end with '/', got {self.path!r}")
        if self.auth_token is not None and not self.auth_token.strip():
            raise ValueError("HttpConfig.auth_token must not be blank")
        if not self.auth_token_name.strip():
            raise ValueError("HttpConfig.auth_token_name must not be blank")
