"""What the resource server reads from the authorization server is bounded: https only (http to loopback),
no redirects (a redirect could carry introspection credentials elsewhere), a size cap, and metadata that
must name the configured issuer (a mix-up otherwise)."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import threading
from typing import Iterator

import pytest

from hexmcp.adapters.http.auth.config import OAuthConfig
from hexmcp.adapters.http.auth.discovery import issuer_metadata
from hexmcp.adapters.http.auth.fetch import MAX_BYTES, FetchError, fetch_json
from hexmcp.adapters.http.auth.jwks import JwksCache


class _Issuer(http.server.BaseHTTPRequestHandler):
    routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        self.seen.append(self.path)
        status, headers, body = self.routes.get(self.path, (404, {}, b"{}"))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


@contextlib.contextmanager
def issuer(routes: dict[str, tuple[int, dict[str, str], bytes]]) -> Iterator[str]:
    handler = type("Handler", (_Issuer,), {"routes": routes, "seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_redirect_is_not_followed() -> None:
    with issuer({"/jwks": (302, {"location": "/elsewhere"}, b""), "/elsewhere": (200, {}, b'{"keys": []}')}) as base:
        with pytest.raises(FetchError, match="redirects are not followed"):
            asyncio.run(fetch_json(base + "/jwks"))


def test_a_body_over_the_cap_is_refused() -> None:
    huge = json.dumps({"keys": [], "pad": "x" * MAX_BYTES}).encode()
    with issuer({"/jwks": (200, {}, huge)}) as base:
        with pytest.raises(FetchError, match="more than"):
            asyncio.run(fetch_json(base + "/jwks"))


@pytest.mark.parametrize("url", ["http://auth.example.com", "ftp://127.0.0.1/x", "https://"])
def test_only_https_or_loopback_http_is_accepted(url: str) -> None:
    with pytest.raises(ValueError, match="https"):
        OAuthConfig(issuer=url, resource="https://mcp.example.com/mcp")


def test_metadata_naming_another_issuer_is_not_used() -> None:
    routes = {"/.well-known/oauth-authorization-server": (200, {}, json.dumps(
        {"issuer": "https://evil.example", "jwks_uri": "https://evil.example/jwks"}).encode())}
    with issuer(routes) as base:
        with pytest.raises(FetchError, match="names issuer 'https://evil.example'"):
            asyncio.run(issuer_metadata(base, timeout_s=2))
        cache = JwksCache(OAuthConfig(issuer=base, resource="https://mcp.example.com/mcp"))
        assert asyncio.run(cache.key("any")) is None and cache.fetches == 0  # nothing fetched from evil.example
