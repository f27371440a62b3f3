"""A POST whose `MCP-Protocol-Version` header names a handshake version (or is absent) but whose request
names a protocol version in `params._meta`, as a 2026-07-28 request does, on a real `hexmcp serve`.

Before: the header routed it to the handshake era, whose core then served the body's version: header
2025-06-18 with a 2026-07-28 body was served as 2026 without the header check, and an unsupported
version named only in the body got -32022 with HTTP 200 where the same version in the header got 400.

What the 2026-07-28 schema the repository carries (tests/data/mcp-schema/2026-07-28/schema.json) says:
- HeaderMismatchError (-32020): "Returned when a server rejects a request because the values in the
  HTTP headers do not match the corresponding values in the request body, or because required headers
  are missing or malformed. For HTTP, the response status code MUST be `400 Bad Request`."
- UnsupportedProtocolVersionError (-32022): "Returned when the request's protocol version is unknown to
  the server or unsupported [...]. For HTTP, the response status code MUST be `400 Bad Request`."
So a header and a body that disagree are 400/-32020 naming both versions, and an unsupported version is
400/-32022 whether the header or only the body names it.
"""

from __future__ import annotations

from typing import Any, Iterator

import httpx
import pytest

from hexmcp.core import versions
from hexmcp.core.meta import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION

from ..support.peer import initialize_params
from ..support.serve_process import LIGHT, ServeProcess, serve_process

pytestmark = pytest.mark.timeout(120)

MODERN = versions.V2026_07_28
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def tools_list(body_version: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 5, "method": "tools/list",
            "params": {"_meta": {META_PROTOCOL_VERSION: body_version, META_CLIENT_CAPABILITIES: {}}}}


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    server: ServeProcess
    with serve_process(*LIGHT) as server, httpx.Client(base_url=server.base, headers=HEADERS, timeout=30) as client:
        yield client


def session(http: httpx.Client, version: str) -> str:
    opened = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                     "params": initialize_params(version)})
    return opened.headers["mcp-session-id"]


@pytest.mark.parametrize("in_session", [False, True])
@pytest.mark.parametrize("header", versions.HANDSHAKE_VERSIONS)
def test_a_handshake_header_with_a_2026_body_is_a_mismatch_naming_both(http: httpx.Client, header: str,
                                                                       in_session: bool) -> None:
    extra = {"mcp-session-id": session(http, header)} if in_session else {}
    answer = http.post("/mcp", json=tools_list(MODERN), headers={"mcp-protocol-version": header, **extra})
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert answer.json()["id"] == 5 and error["code"] == -32020, error
    assert repr(header) in error["message"] and repr(MODERN) in error["message"], error


@pytest.mark.parametrize("unsupported", ["2099-01-01", "garbage", versions.V2025_06_18])
def test_an_unsupported_version_in_the_body_alone_is_answered_as_in_the_header(http: httpx.Client,
                                                                               unsupported: str) -> None:
    """Named only in the body (no header): 400 and -32022 with the supported list, as the header gets. A
    handshake version is not one a `_meta` envelope can name (those requests carry no envelope)."""
    in_body = http.post("/mcp", json=tools_list(unsupported))
    assert in_body.status_code == 400, in_body.text
    error = in_body.json()["error"]
    assert error["code"] == -32022 and error["data"]["requested"] == unsupported, error
    assert error["data"]["supported"] == list(versions.SUPPORTED_VERSIONS)
    with_header = http.post("/mcp", json=tools_list(unsupported), headers={"mcp-protocol-version": unsupported})
    assert with_header.status_code == 400 and with_header.json()["error"]["code"] == -32022, with_header.text


def test_a_2026_body_without_the_header_is_still_served(http: httpx.Client) -> None:
    """A client that does not know the server's era yet probes with a headerless `server/discover`
    (hexmcp's own client does; an older server answers -32601 and it falls back to `initialize`)."""
    answer = http.post("/mcp", json=tools_list(MODERN))
    assert answer.status_code == 200 and "tools" in answer.json()["result"], answer.text


def test_agreeing_requests_are_served(http: httpx.Client) -> None:
    modern = http.post("/mcp", json=tools_list(MODERN), headers={"mcp-protocol-version": MODERN,
                                                                  "mcp-method": "tools/list"})
    assert modern.status_code == 200 and "tools" in modern.json()["result"], modern.text
    plain = http.post("/mcp", json={"jsonrpc": "2.0", "id": 6, "method": "tools/list",
                                    "params": {"_meta": {"progressToken": "t"}}},
                      headers={"mcp-protocol-version": versions.V2025_06_18})
    assert plain.status_code == 200 and "tools" in plain.json()["result"], plain.text
