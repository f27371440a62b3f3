"""2026-07-28 routing headers: `Mcp-Method`, `Mcp-Name` and `MCP-Protocol-Version` must agree with the body.

Pure functions over (headers, decoded body): they return None when the request may go on, or the
semantic error that stops it. First the `MCP-Protocol-Version` header must name a version the 2026
path serves (-32022); then, as the conformance harness expects, the `_meta` envelope must be complete
(-32602) and the headers must match the body (-32020). Whether the `_meta` version is one we serve is
the core's question (-32022), asked after these.

Header names are case-insensitive (ASGI lower-cases them); values are case-sensitive, compared after
the optional whitespace HTTP allows around them is stripped. `Mcp-Name` may carry a non-ASCII value as
`=?base64?<base64 of UTF-8>?=`; a malformed sentinel is a mismatch, not a literal.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from hexmcp.core import ErrorCode, versions
from hexmcp.core.meta import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION

from .asgi import Scope
from .request_headers import header_values

ROUTING_HEADERS = (b"mcp-protocol-version", b"mcp-method", b"mcp-name")
# The body member each method's Mcp-Name must equal.
NAME_MEMBER = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
               "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
_SENTINEL = re.compile(r"^=\?base64\?(.*)\?=$", re.DOTALL)

Problem = tuple[ErrorCode, str, dict[str, Any] | None]


def decode_value(raw: str) -> str | None:
    """A header value as text: the literal, or the decoded `=?base64?…?=` sentinel (None if malformed)."""
    match = _SENTINEL.match(raw)
    if match is None:
        return raw
    encoded = match.group(1)
    try:
        decoded = base64.b64decode(encoded, validate=True)
        if base64.b64encode(decoded).decode("ascii") != encoded:
            return None  # not canonical: two spellings of one value would defeat the comparison
        return decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _single(scope: Scope, name: bytes) -> tuple[str | None, bool]:
    """(value, duplicated) of a routing header, stripped of surrounding whitespace."""
    values = header_values(scope, name)
    if not values:
        return None, False
    return values[0].decode("latin-1").strip(" \t"), len(values) > 1


def check_version(scope: Scope) -> Problem | None:
    """The `MCP-Protocol-Version` header names a version served without a handshake (or is absent)."""
    value, _ = _single(scope, b"mcp-protocol-version")
    if value is None or value in versions.STATELESS_VERSIONS:
        return None
    return unsupported_version(value)


def check_body_version(header_version: str | None, params: Any) -> Problem | None:
    """A POST routed to the handshake era (its `MCP-Protocol-Version` header names a handshake version, or
    it has none) whose request names a protocol version in `params._meta`, as a 2026-07-28 request does.

    The header and the body must agree, as on the 2026 path (-32020 naming both); a version this server
    does not serve statelessly is -32022, with the status the same version named in the header gets (400).
    Without this, the core served the body's version whatever the header said, and its -32022 went out as
    a handshake-era 200. A 2026 request without the header is still served: a client that does not yet
    know which era the server speaks sends its first `server/discover` so (hexmcp's own client does), and
    an older server answers it -32601, which is how that client learns to fall back to `initialize`."""
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is not dict or META_PROTOCOL_VERSION not in meta:
        return None  # a handshake-era request: the header (or the session) decides its version
    body_version = meta[META_PROTOCOL_VERSION]
    if header_version is not None and body_version != header_version:
        return _mismatch(f"MCP-Protocol-Version header {header_version!r} does not match "
                         f"params._meta protocolVersion {body_version!r}")
    if body_version not in versions.STATELESS_VERSIONS:
        return unsupported_version(body_version)
    return None


def unsupported_version(requested: Any) -> Problem:
    # The same answer, data included, as the core's for an unsupported `_meta` protocolVersion.
    return (ErrorCode.UNSUPPORTED_PROTOCOL_VERSION, f"Unsupported protocol version: {requested!r}",
            {"requested": str(requested), "supported": list(versions.SUPPORTED_VERSIONS)})


def check_envelope(params: Any) -> Problem | None:
    """The per-request `_meta` keys every 2026-07-28 request must carry."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        return (ErrorCode.INVALID_PARAMS, "params._meta must be an object carrying the protocol version and "
                "client capabilities (protocol 2026-07-28)", {"path": "$.params._meta"})
    missing = [key for key in (META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES) if key not in meta]
    if missing:
        return (ErrorCode.INVALID_PARAMS, f"params._meta is missing the required key(s): {', '.join(missing)}",
                {"path": f"$.params._meta.{missing[0]}"})
    return None


def check_headers(scope: Scope, method: str, params: Any) -> Problem | None:
    """The routing headers against the body; run after `check_envelope` succeeded."""
    values: dict[bytes, str | None] = {}
    for name in ROUTING_HEADERS:
        value, duplicated = _single(scope, name)
        if duplicated:
            return _mismatch(f"the {name.decode()} header appears more than once")
        values[name] = value
    meta = params["_meta"]
    body_version = meta[META_PROTOCOL_VERSION]
    if values[b"mcp-protocol-version"] != body_version:
        return _mismatch(f"MCP-Protocol-Version header {values[b'mcp-protocol-version']!r} does not match "
                         f"params._meta protocolVersion {body_version!r}")
    if values[b"mcp-method"] is None:
        return _mismatch("the Mcp-Method header is required")
    if values[b"mcp-method"] != method:
        return _mismatch(f"Mcp-Method header {values[b'mcp-method']!r} does not match the body method {method!r}")
    member = NAME_MEMBER.get(method)
    if member is not None:
        body_name = params.get(member)
        if body_name is not None:
            raw = values[b"mcp-name"]
            if raw is None:
                return _mismatch(f"the Mcp-Name header is required for {method}")
            if decode_value(raw) != body_name:
                return _mismatch(f"Mcp-Name header does not match params.{member}")
    return None


def _mismatch(message: str) -> Problem:
    return ErrorCode.HEADER_MISMATCH, f"Header mismatch: {message}", None


# --- Mcp-Param-*: tool arguments a tool's inputSchema mirrors into headers (`x-mcp-header`) -------------

_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_PARAM_TYPES = ("string", "integer", "boolean")
HEADER_ANNOTATION = "x-mcp-header"
Annotation = tuple[tuple[str, ...], str, str]  # (argument path, header name lower-case, JSON type)


def param_annotations(schema: Any) -> list[Annotation]:
    """The `x-mcp-header` properties reachable through plain `properties` chains.

    An invalid set (a bad token, a non-scalar type, two headers equal case-insensitively) validates
    nothing, as the spec says: the tool's author made a mistake the client cannot be blamed for.
    """
    found: list[Annotation] = []

    def walk(node: Any, path: tuple[str, ...]) -> bool:
        properties = node.get("properties") if isinstance(node, dict) else None
        if not isinstance(properties, dict):
            return True
        for name, prop in properties.items():
            if not isinstance(prop, dict):
                continue
            token = prop.get(HEADER_ANNOTATION)
            if token is not None:
                if not isinstance(token, str) or not _TOKEN.match(token) or prop.get("type") not in _PARAM_TYPES:
                    return False
                found.append(((*path, name), f"mcp-param-{token.lower()}", prop["type"]))
            elif not walk(prop, (*path, name)):
                return False
        return True

    if not walk(schema, ()):
        return []
    names = [header_name for _, header_name, _ in found]
    return found if len(names) == len(set(names)) else []


def check_param_headers(scope: Scope, annotations: list[Annotation], arguments: Any) -> Problem | None:
    for path, header_name, kind in annotations:
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        raw_values = header_values(scope, header_name.encode())
        if len(raw_values) > 1:
            return _mismatch(f"the {header_name} header appears more than once")
        if value is None:
            if raw_values:
                return _mismatch(f"{header_name} is set but argument {'.'.join(path)} is absent")
            continue
        if not raw_values:
            return _mismatch(f"the {header_name} header is required when argument {'.'.join(path)} is given")
        text = decode_value(raw_values[0].decode("latin-1").strip(" \t"))
        if text is None or not _same(text, value, kind):
            return _mismatch(f"the {header_name} header does not match argument {'.'.join(path)}")
    return None


def _same(text: str, value: Any, kind: str) -> bool:
    if kind == "boolean":
        return isinstance(value, bool) and text == ("true" if value else "false")
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return re.fullmatch(r"-?\d+", text) is not None and int(text) == value
    return isinstance(value, str) and text == value
