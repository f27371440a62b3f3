"""Pure-ASGI middleware that refuses requests before any protocol work: Host/Origin, bearer token.

`HostOriginGuard` defends against DNS rebinding: a browser page on evil.example whose name now resolves
to 127.0.0.1 still sends `Host: evil.example` and `Origin: http://evil.example`, so both are checked
against allow-lists (loopback names on any port, the bound host, and whatever was configured).
Requests without an Origin (non-browser clients) pass the Origin check. `BearerAuth` compares tokens
in constant time. Both validate their configuration in `__init__` and cost a cache lookup or two per request.
"""

from __future__ import annotations

import functools
import hmac
from typing import Iterable
from urllib.parse import urlsplit

from hexmcp.core import ErrorCode

from .asgi import ASGIApp, Receive, Scope, Send
from .refusals import refuse, refuse_upgrade
from .request_headers import header

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})


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


class HostOriginGuard:
    def __init__(self, app: ASGIApp, *, bound_host: str, allowed_hosts: Iterable[str] = (),
                 allowed_origins: Iterable[str] = ()) -> None:
        self.app = app
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
            if not name:
                raise ValueError(f"allowed host {entry!r} has no name")
            (self.host_ports.add((name, port)) if port else self.host_names.add(name))
        self.origin_names = set(self.host_names)
        self.origins: set[str] = set()
        for entry in origins:
            if entry == "*":
                continue
            if "://" in entry:
                parts = urlsplit(entry)
                if parts.scheme not in ("http", "https") or not parts.netloc:
                    raise ValueError(f"allowed origin {entry!r} is not scheme://host[:port]")
                self.origins.add(f"{parts.scheme}://{parts.netloc.lower()}")
            else:
                self.origin_names.add(_split_host(entry)[0])  # a bare name: any scheme, any port
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

    def origin_allowed(self, value: bytes | None) -> bool:
        if value is None or self.any_origin:
            return True
        text = value.decode("latin-1").strip().lower().rstrip("/")
        if text in self.origins:
            return True
        parts = urlsplit(text)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False  # includes the opaque "null" origin of sandboxed pages and file:// documents
        return _split_host(parts.netloc)[0] in self.origin_names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            if not self.host_allowed(header(scope, b"host")):
                await _deny(scope, send, ErrorCode.FORBIDDEN, "Forbidden: Host header not allowed")
                return
            if not self.origin_allowed(header(scope, b"origin")):
                await _deny(scope, send, ErrorCode.FORBIDDEN, "Forbidden: Origin not allowed")
                return
        await self.app(scope, receive, send)


class BearerAuth:
    def __init__(self, app: ASGIApp, *, token: str | None, open_paths: Iterable[str] = ()) -> None:
        if token is not None and (not token or token != token.strip()):
            raise ValueError("the bearer token must be non-empty and have no surrounding whitespace")
        self.app = app
        self._expected = f"Bearer {token}".encode() if token else None
        self._open = frozenset(open_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (self._expected is not None and scope["type"] in ("http", "websocket")
                and scope["path"] not in self._open and scope.get("method") != "OPTIONS"):
            given = header(scope, b"authorization") or b""
            # The scheme name is case-insensitive; normalise it, then compare the rest in constant time.
            if given[:7].lower() == b"bearer ":
                given = b"Bearer " + given[7:].strip()
            if not hmac.compare_digest(given, self._expected):
                await _deny(scope, send, ErrorCode.UNAUTHORIZED, "Unauthorized: a valid bearer token is required",
                            headers=[(b"www-authenticate", b'Bearer realm="hexmcp"')])
                return
        await self.app(scope, receive, send)


async def _deny(scope: Scope, send: Send, code: ErrorCode, message: str,
                headers: list[tuple[bytes, bytes]] | None = None) -> None:
    if scope["type"] == "websocket":
        await refuse_upgrade(scope, send, code, message, headers=headers)
        return
    await refuse(send, code, message, headers=headers)
