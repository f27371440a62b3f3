"""OAuth 2.0 Protected Resource Metadata (RFC 9728): how a client learns which authorization server
issues tokens for this server, and which scopes it knows.

Served without authentication at `/.well-known/oauth-protected-resource` and at the path-suffixed form
for the resource's path (`/.well-known/oauth-protected-resource/mcp`), the two places MCP clients look.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit, urlunsplit

from ..asgi import Receive, Scope, Send
from ..responses import respond
from .config import OAuthConfig

WELL_KNOWN = "/.well-known/oauth-protected-resource"


def metadata_url(config: OAuthConfig) -> str:
    """The document's URL for this resource: the well-known prefix inserted before the resource's path."""
    parts = urlsplit(config.resource)
    return urlunsplit((parts.scheme, parts.netloc, WELL_KNOWN + parts.path, "", ""))


def metadata_paths(config: OAuthConfig, mcp_path: str) -> list[str]:
    """Where the app serves the document: the root form, and the suffixed form for the resource's path
    and for the MCP endpoint's (they differ behind a proxy that adds a prefix)."""
    paths = [WELL_KNOWN]
    for path in (urlsplit(config.resource).path, mcp_path):
        if path and path != "/" and WELL_KNOWN + path not in paths:
            paths.append(WELL_KNOWN + path)
    return paths


class ProtectedResourceMetadata:
    def __init__(self, config: OAuthConfig, scopes: frozenset[str]) -> None:
        document = {"resource": config.resource, "authorization_servers": [config.issuer],
                    "bearer_methods_supported": ["header"], "scopes_supported": sorted(scopes),
                    "resource_name": "hexmcp"}
        self._body = json.dumps(document, separators=(",", ":")).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") not in ("GET", "HEAD"):
            await respond(send, 405, b"", headers=[(b"allow", b"GET, HEAD")])
            return
        body = b"" if scope["method"] == "HEAD" else self._body
        await respond(send, 200, body, headers=[(b"cache-control", b"max-age=3600"),
                                                (b"access-control-allow-origin", b"*")])
