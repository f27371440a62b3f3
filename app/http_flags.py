"""`hexmcp serve`'s HTTP flags: where it listens, who may call it, and the limits that keep hostile
connections from locking others out."""

from __future__ import annotations

import argparse
import os

from hexmcp.tools.flag_types import port_number, positive_int, positive_seconds, seconds_or_off, tolerance_seconds

from .scale import add_scale_arguments
from .serve_auth import add_serve_auth_flags


def proxy_network(text: str) -> str:
    """argparse type for --trusted-proxies: an address or CIDR, checked here; the server reads it again
    (adapters/http/forwarded.py), and a bad one there was a traceback after start-up began."""
    import ipaddress

    try:
        ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an IP address or CIDR (10.0.0.0/8, ::1), got {text!r}") from None
    return text


def allowed_origin(text: str) -> str:
    """argparse type for --allowed-origins and --cors-origins: the HTTP guard's own rules, checked before
    start-up rather than as a traceback when the app is built."""
    return _guard_accepts(text, allowed_origins=[text])


def allowed_host(text: str) -> str:
    """argparse type for --allowed-hosts, as allowed_origin."""
    return _guard_accepts(text, allowed_hosts=[text])


def _guard_accepts(text: str, **entries: list[str]) -> str:
    from hexmcp.adapters.http.guard import HostOriginGuard

    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    try:
        HostOriginGuard(bound_host="127.0.0.1", **entries)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def add_http_flags(parser: argparse.ArgumentParser) -> None:
    env = os.environ.get
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1: local only)")
    parser.add_argument("--port", type=port_number, default=8090)
    parser.add_argument("--stateless", action="store_true",
                        help="no sessions: every POST stands alone, so instances can sit behind a plain load "
                             "balancer (set the same HEXMCP_STATE_SECRET on all of them)")
    parser.add_argument("--auth-token", default=env("HEXMCP_AUTH_TOKEN"),
                        help="require 'Authorization: Bearer T' (default: $HEXMCP_AUTH_TOKEN; /health stays open)")
    parser.add_argument("--auth-token-name", default="token", metavar="NAME",
                        help="the identity of clients presenting --auth-token, for rate limits, tasks and the "
                             "audit trail (default: token)")
    parser.add_argument("--trusted-proxies", nargs="*", default=[], metavar="CIDR", type=proxy_network,
                        help="reverse proxies (addresses or CIDRs) whose X-Forwarded-For names the client; "
                             "from anyone else the header is ignored (default: none)")
    add_oauth_flags(parser)
    parser.add_argument("--allowed-origins", nargs="*", default=[], metavar="ORIGIN", type=allowed_origin,
                        help="Origins accepted besides this server's own (loopback on its port) "
                             "(scheme://host[:port], a bare host, or *)")
    parser.add_argument("--allowed-hosts", nargs="*", default=[], metavar="HOST", type=allowed_host,
                        help="Host header values accepted besides loopback and the bound host (host[:port] or *)")
    parser.add_argument("--cors-origins", nargs="*", default=[], metavar="ORIGIN", type=allowed_origin,
                        help="origins that get CORS headers (default: none, CORS off)")
    parser.add_argument("--max-body-bytes", type=positive_int, default=4 * 1024 * 1024, metavar="N",
                        help="largest request body; beyond it 413 (default 4 MiB)")
    parser.add_argument("--request-timeout", type=positive_seconds, default=120.0, metavar="SECONDS",
                        help="deadline for answering a request (default 120)")
    parser.add_argument("--body-timeout", type=positive_seconds, default=30.0, metavar="SECONDS",
                        help="deadline for receiving a request body (408 beyond it; default 30)")
    parser.add_argument("--max-concurrent-requests", type=positive_int, default=256, metavar="N",
                        help="requests served at once; beyond it 503 + Retry-After (default 256)")
    parser.add_argument("--max-sessions", type=positive_int, default=10_000, metavar="N",
                        help="sessions held at once; beyond it an idle one is closed to make room, else 503 "
                             "(default 10,000)")
    parser.add_argument("--session-idle-timeout", type=positive_seconds, default=1800.0, metavar="SECONDS",
                        help="a session without traffic for this long is closed (default 1800)")
    parser.add_argument("--head-timeout", type=positive_seconds, default=5.0, metavar="SECONDS",
                        help="close a connection whose request head is not complete within this (default 5)")
    parser.add_argument("--max-connections-per-address", type=positive_int, default=256, metavar="N",
                        help="open connections from one client IP; beyond it 503 + Retry-After (default 256)")
    parser.add_argument("--max-connections", type=positive_int, default=None, metavar="N",
                        help="open connections in total; beyond it 503 + Retry-After (default: the open-files "
                             "limit, raised to the hard limit at start-up, minus 256)")
    parser.add_argument("--max-head-bytes", type=positive_int, default=32 * 1024, metavar="N",
                        help="largest request head (request line and headers); beyond it 431 (default 32 KiB)")
    parser.add_argument("--max-batch-messages", type=positive_int, default=64, metavar="N",
                        help="messages in one JSON-RPC batch; beyond it 400 (default 64)")
    parser.add_argument("--max-sessions-per-client", type=positive_int, default=128, metavar="N",
                        help="sessions one client holds; beyond it its least recently used idle one is replaced "
                             "(default 128)")
    parser.add_argument("--max-streams", type=positive_int, default=1024, metavar="N",
                        help="long-lived streams (GET, subscriptions/listen) held open at once, and WebSockets, each "
                             "counted on its own; beyond it a client below its fair share is admitted by closing "
                             "the largest holder's oldest idle one, else 503 + Retry-After (default 1,024)")
    parser.add_argument("--max-streams-per-client", type=positive_int, default=128, metavar="N",
                        help="long-lived streams (GET, subscriptions/listen) and WebSockets one client (an IPv6 "
                             "address: its /64) holds open at once, each counted on its own; beyond it 503 + "
                             "Retry-After (default 128)")
    parser.add_argument("--stream-idle-timeout", type=seconds_or_off, default=1800.0, metavar="SECONDS",
                        help="close a GET or subscriptions/listen stream, or a WebSocket, that carried nothing for "
                             "this long and has no request in flight (a GET stream is resumed, a listen sent again); "
                             "0: never (default 1800)")
    parser.add_argument("--replay-bytes-per-session", type=positive_int, default=2 * 1024 * 1024, metavar="N",
                        help="bytes of SSE events kept for resumption per session (default 2 MiB)")
    parser.add_argument("--replay-bytes-per-client", type=positive_int, default=16 * 1024 * 1024, metavar="N",
                        help="the same for all of one client's sessions (default 16 MiB)")
    parser.add_argument("--replay-bytes-total", type=positive_int, default=256 * 1024 * 1024, metavar="N",
                        help="the same for the whole server (default 256 MiB)")
    parser.add_argument("--replay-retention", type=positive_seconds, default=60.0, metavar="SECONDS",
                        help="how long an SSE event stays kept for Last-Event-ID resumption (default 60)")
    add_scale_arguments(parser)
    add_serve_auth_flags(parser)


def add_oauth_flags(parser: argparse.ArgumentParser) -> None:
    """OAuth 2.1 resource server: accept access tokens from the operator's authorization server (docs/auth.md)."""
    group = parser.add_argument_group("OAuth 2.1 (accept access tokens from an authorization server)")
    group.add_argument("--oauth-issuer", default=None, metavar="URL",
                       help="the authorization server's issuer; turns OAuth on (with --oauth-resource)")
    group.add_argument("--oauth-resource", default=None, metavar="URL",
                       help="this server's canonical URI as clients reach it, e.g. https://mcp.example.com/mcp: "
                            "tokens must name it as their audience (RFC 8707)")
    group.add_argument("--oauth-audience", nargs="*", default=[], metavar="AUD",
                       help="other audience values accepted besides --oauth-resource")
    group.add_argument("--oauth-validation", choices=["jwt", "introspection"], default="jwt",
                       help="check tokens as JWTs against the issuer's keys (default) or by introspection (RFC 7662)")
    group.add_argument("--oauth-jwks-url", default=None, metavar="URL",
                       help="the issuer's JWKS (default: jwks_uri from the issuer's metadata)")
    group.add_argument("--oauth-introspection-url", default=None, metavar="URL",
                       help="the introspection endpoint (default: from the issuer's metadata)")
    group.add_argument("--oauth-client-id", default=None, metavar="ID",
                       help="this server's client id at the issuer, for introspection")
    group.add_argument("--oauth-client-secret-file", default=None, metavar="PATH",
                       help="a file holding the client secret for introspection (else $HEXMCP_OAUTH_CLIENT_SECRET)")
    group.add_argument("--oauth-scopes", nargs="*", default=[], metavar="RULE",
                       help="METHOD=SCOPE or tool:NAME=SCOPE rules over the defaults (mcp:read to list and read, "
                            "mcp:tools for tools/call); an empty SCOPE needs none")
    group.add_argument("--oauth-leeway", type=tolerance_seconds, default=30.0, metavar="SECONDS",
                       help="clock skew tolerated on token expiry and not-before (default 30)")
