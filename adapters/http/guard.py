"""The gates a request passes before any protocol work: Host/Origin, bearer token.

`HostOriginGuard` defends against DNS rebinding: a browser page on evil.example whose name now resolves
to 127.0.0.1 still sends `Host: evil.example` and `Origin: http://evil.example`, so both are checked
against allow-lists (loopback names, the bound host, and whatever was configured). A Host may name them
on any port (a proxy in front changes it), but an Origin is a web origin, port included: a page on
http://localhost:5173 is not this server's page, so an Origin naming this server (loopback, the bound
host, an allowed host name) passes only on the port the request was addressed to (the Host's) or the
one it arrived on; configured origins pass as configured. Requests without an Origin (non-browser
clients) pass the Origin check. `BearerAuth` compares tokens
in constant time. Both validate their configuration in `__init__` and cost a cache lookup or two per request.

Each is a predicate, not a middleware: `denial(request)` is None or the `Refusal` to answer, and the HTTP
app (`app.py`) and the WebSocket handshake (`ws/handshake.py`) answer it in their own wire shape. A
middleware layer per gate cost a coroutine frame per request each, for a check of a few dict lookups.
"""

from __future__ import annotations

import functools
import hmac
from typing import Iterable
from urllib.parse import urlsplit

import attrs

from hexmcp.core import ErrorCode

from .asgi import Scope, Send
from .refusals import refuse, refuse_upgrade
from .request import HttpRequest

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})
DEFAULT_PORTS = {"http": "80", "https": "443"}


@attrs.frozen(kw_only=True)
class Refusal:
    """Why a gate turned a request away, in the terms every wire shape is built from."""

    code: ErrorCode
    message: str
    headers: tuple[tuple[bytes, bytes], ...] = ()


HOST_REFUSED = Refusal(code=ErrorCode.FORBIDDEN, message="Forbidden: Host header not allowed")
ORIGIN_REFUSED = Refusal(code=ErrorCode.FORBIDDEN, message="Forbidden: Origin not allowed")
# RFC 9112 §3.2: a request with more than one Host line gets 400. Two Hosts (or two Origins) are never what
# a browser sends; the header table keeps the first, and a proxy or the app behind it may read another.
HOST_REPEATED = Refusal(code=ErrorCode.INVALID_REQUEST, message="Bad Request: more than one Host header")
ORIGIN_REPEATED = Refusal(code=ErrorCode.FORBIDDEN, message="Forbidden: more than one Origin header")
TOKEN_REFUSED = Refusal(code=ErrorCode.UNAUTHORIZED, message="Unauthorized: a valid bearer token is required",
                        headers=((b"www-authenticate", b'Bearer realm="hexmcp"'),))


def _split_host(value: str) -> tuple[str, str | None]:
    """`name[:port]` (IPv6 in brackets) → (lower-case name, port or None)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, None
        name, rest = value[: end + 1], value[end + 1:]
        return name, rest[1:] if rest.startswith(":") else None
    name, sep, port = value.partition(":")
    return name, port if sep else None


def _server_port(scope: Scope) -> int | None:
    server = scope.get("server")  # (host, port) of the listening socket; None for a Unix socket
    return server[1] if server else None


_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.-_")


def _check_name(name: str, entry: str, what: str) -> None:
    """A configured host name: a DNS name, an IPv4 address or a bracketed IPv6 one. Anything else ('a b',
    '%%', '*.example.com', which is not a pattern here) could never equal a Host or Origin a client sends."""
    if not name:
        raise ValueError(f"{what} {entry!r} has no name")
    bracketed = name.startswith("[") and name.endswith("]")
    allowed = set("0123456789abcdef:.") if bracketed else _NAME_CHARACTERS
    if not set(name[1:-1] if bracketed else name) <= allowed:
        raise ValueError(f"{what} {entry!r} is not a host name or address")


class HostOriginGuard:
    def __init__(self, *, bound_host: str, allowed_hosts: Iterable[str] = (),
                 allowed_origins: Iterable[str] = ()) -> None:
        hosts = [h.strip() for h in allowed_hosts if h.strip()]
        origins = [o.strip().rstrip("/") for o in allowed_origins if o.strip()]
        self.any_host = "*" in hosts
        self.any_origin = "*" in origins
        bound = bound_host.strip().lower()
        if ":" in bound and not bound.startswith("["):
            bound = f"[{bound}]"  # an IPv6 literal as it appears in a Host header
        self.host_names = set(LOOPBACK_HOSTS) | ({bound} if bound not in WILDCARD_BINDS else set())
        self.host_ports: set[tuple[str, str]] = set()
        for entry in hosts:
            if entry == "*":
                continue
            name, port = _split_host(entry)
            _check_name(name, entry, "allowed host")
            (self.host_ports.add((name, port)) if port else self.host_names.add(name))
        self.own_names = frozenset(self.host_names)  # this server's names: as an Origin, on its own port only
        self.origin_names: set[str] = set()  # names configured as origins: any scheme, any port
        self.origins: set[str] = set()
        for entry in origins:
            if entry == "*":
                continue
            if "://" in entry:
                parts = urlsplit(entry)
                if parts.scheme not in ("http", "https") or not parts.netloc:
                    raise ValueError(f"allowed origin {entry!r} is not scheme://host[:port]")
                _check_name(_split_host(parts.netloc)[0], entry, "allowed origin")
                self.origins.add(f"{parts.scheme}://{parts.netloc.lower()}")
            else:
                name = _split_host(entry)[0]
                _check_name(name, entry, "allowed origin")
                self.origin_names.add(name)  # a bare name: any scheme, any port
        # Clients send the same few Host and Origin values on every request: remember the verdicts.
        self.host_allowed = functools.lru_cache(maxsize=256)(self.host_allowed)  # type: ignore[method-assign]
        self.origin_allowed = functools.lru_cache(maxsize=256)(self.origin_allowed)  # type: ignore[method-assign]

    def host_allowed(self, value: bytes | None) -> bool:
        if self.any_host:
            return True
        if value is None:
            return False  # HTTP/1.1 requires Host; a request without one is not from a real client
        name, port = _split_host(value.decode("latin-1"))
        return name in self.host_names or (port is not None and (name, port) in self.host_ports)

    def origin_allowed(self, value: bytes | None, host: bytes | None = None, server_port: int | None = None) -> bool:
        """`host`: the request's Host header; `server_port`: the port the connection arrived on."""
        if value is None or self.any_origin:
            return True
        text = value.decode("latin-1").strip().lower().rstrip("/")
        if text in self.origins:
            return True
        parts = urlsplit(text)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False  # includes the opaque "null" origin of sandboxed pages and file:// documents
        name, port = _split_host(parts.netloc)
        if name in self.origin_names:
            return True
        if name not in self.own_names:
            return False
        # Browsers leave a scheme's default port out of both Origin and Host, so "no port" matches "no port".
        if port == DEFAULT_PORTS[parts.scheme]:
            port = None
        addressed = _split_host(host.decode("latin-1"))[1] if host is not None else None
        return port == addressed or (port is not None and port == str(server_port))

    def denial(self, request: HttpRequest) -> Refusal | None:
        """An HTTP or WebSocket request's Host, then its Origin."""
        headers = request.headers
        if len(headers) != len(request.scope["headers"]):  # some name was sent twice (rare): Host or Origin?
            repeated = _repeated(request.scope["headers"])
            if repeated is not None:
                return repeated
        host = headers.get(b"host")
        if not self.host_allowed(host):
            return HOST_REFUSED
        origin = headers.get(b"origin")
        if origin is not None and not self.origin_allowed(origin, host, _server_port(request.scope)):
            return ORIGIN_REFUSED
        return None


def _repeated(raw: list[tuple[bytes, bytes]]) -> Refusal | None:
    names = [name for name, _ in raw if name in (b"host", b"origin")]
    if names.count(b"host") > 1:
        return HOST_REPEATED
    if names.count(b"origin") > 1:
        return ORIGIN_REPEATED
    return None


class BearerAuth:
    def __init__(self, *, token: str | None, open_paths: Iterable[str] = ()) -> None:
        if token is not None and (not token or token != token.strip()):
            raise ValueError("the bearer token must be non-empty and have no surrounding whitespace")
        self._expected = f"Bearer {token}".encode() if token else None
        self._open = frozenset(open_paths)

    def denial(self, request: HttpRequest) -> Refusal | None:
        """An HTTP or WebSocket request's token, unless none is configured or the path is open. A CORS
        preflight (which carries no credentials) never gets here when CORS is configured: the CORS layer in
        front answers it; any other OPTIONS needs the token like every other request."""
        scope = request.scope
        if self._expected is None or scope["path"] in self._open:
            return None
        given = request.header(b"authorization") or b""
        # The scheme name is case-insensitive; normalise it, then compare the rest in constant time.
        if given[:7].lower() == b"bearer ":
            given = b"Bearer " + given[7:].strip()
        return None if hmac.compare_digest(given, self._expected) else TOKEN_REFUSED


async def deny(scope: Scope, send: Send, refusal: Refusal) -> None:
    """Answer a gate's refusal: a JSON-RPC error response, or the HTTP answer to a WebSocket upgrade."""
    headers = list(refusal.headers) or None
    if scope["type"] == "websocket":
        await refuse_upgrade(scope, send, refusal.code, refusal.message, headers=headers)
        return
    await refuse(send, refusal.code, refusal.message, headers=headers)
