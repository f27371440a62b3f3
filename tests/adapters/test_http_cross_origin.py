"""What a page in a browser on another origin can make the server do: nothing (issue 30).

A page may POST `text/plain`, a form or multipart without a CORS preflight, and a page on another port
of the same machine (http://localhost:5173, a dev server) is another web origin: such a request must not
reach a tool. The REST dialect once ignored Content-Type, and the Origin check once admitted loopback
names on any port.
"""

from __future__ import annotations

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from hexmcp.adapters.http import HttpConfig
from hexmcp.adapters.ws import WsConfig
from hexmcp.core import ErrorCode
from hexmcp.wire import jsonrpc
from tests.adapters.http_live import live_server
from tests.fixtures.demo_server import build_demo_server
from tests.fixtures.ws_live import ChatGptClient, live_ws, ws_demo_server

pytestmark = pytest.mark.timeout(30)

CALL = b'{"name": "record", "arguments": {"note": "from a page"}}'
ENVELOPE = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ' + CALL + b"}"
NOT_JSON = ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x", "application/jsonx", "text/json"]


@pytest.fixture(scope="module")
def served():
    server = build_demo_server()
    calls: list[str] = []

    @server.tool()
    async def record(note: str) -> str:
        """Remembers that it ran (what a forged call must never make happen)."""
        calls.append(note)
        return "recorded"

    with live_server(server) as live:
        yield live, calls


@pytest.fixture
def http(served):
    served[1].clear()  # each test counts its own calls
    with httpx.Client(base_url=served[0].base, timeout=10) as client:
        yield client


@pytest.mark.parametrize("content_type", [*NOT_JSON, None])
def test_rest_refuses_a_body_that_is_not_json(served, http, content_type) -> None:
    live, calls = served
    headers = {"content-type": content_type} if content_type else {}
    response = http.post("/mcp/tools/call", content=CALL, headers=headers)
    assert response.status_code == 415
    error = response.json()
    assert error["error"] == ErrorCode.INVALID_REQUEST.value and "application/json" in error["message"]
    assert error["eventId"] and calls == []


def test_rest_still_serves_json_and_a_bodiless_ping(served, http) -> None:
    live, calls = served
    for content_type in ("application/json", "Application/JSON; charset=utf-8"):
        response = http.post("/mcp/tools/call", content=CALL, headers={"content-type": content_type})
        assert response.status_code == 200 and response.json()["content"][0]["text"] == "recorded"
    assert http.post("/mcp/ping").status_code == 200  # mcp-go's ping: no body, no type
    assert calls == ["from a page", "from a page"]


@pytest.mark.parametrize("content_type", NOT_JSON)
def test_mcp_endpoint_refuses_a_body_that_is_not_json(served, http, content_type) -> None:
    live, calls = served
    response = http.post("/mcp", content=ENVELOPE, headers={"content-type": content_type,
                                                             "accept": "application/json, text/event-stream"})
    assert response.status_code == 415 and "application/json" in response.json()["error"]["message"]
    assert calls == []


@pytest.mark.parametrize("origin", ["http://localhost:5173", "http://127.0.0.1:5173", "http://[::1]:5173",
                                    "http://localhost", "https://localhost:{other}", "http://127.0.0.1:{other}"])
def test_a_page_on_another_local_port_is_refused(served, http, origin) -> None:
    live, calls = served
    origin = origin.format(other=live.config.port + 1)
    response = http.post("/mcp/tools/call", content=CALL, headers={"content-type": "application/json",
                                                                   "origin": origin})
    assert response.status_code == 403
    error = response.json()
    assert error["error"]["code"] == jsonrpc.ERROR_CODES[ErrorCode.FORBIDDEN] and "Origin" in error["error"]["message"]
    assert calls == []


@pytest.mark.parametrize("origin", ["http://localhost:{port}", "http://127.0.0.1:{port}", "http://[::1]:{port}"])
def test_this_servers_own_pages_are_served(served, http, origin) -> None:
    live, calls = served
    response = http.post("/mcp/tools/call", content=CALL, headers={"content-type": "application/json",
                                                                   "origin": origin.format(port=live.config.port)})
    assert response.status_code == 200 and calls == ["from a page"]


def test_the_port_a_proxy_was_addressed_on_is_this_servers_port(served, http) -> None:
    """Behind a proxy on localhost:8080 the page is http://localhost:8080 and the Host says so."""
    live, calls = served
    response = http.post("/mcp/tools/call", content=CALL, headers={"content-type": "application/json",
                                                                   "host": "localhost:8080",
                                                                   "origin": "http://localhost:8080"})
    assert response.status_code == 200 and calls == ["from a page"]


def test_configured_origins_pass_on_any_port_they_name() -> None:
    config = {"allowed_origins": ["http://localhost:5173", "dev.example"]}
    with live_server(build_demo_server(), **config) as live, httpx.Client(base_url=live.base) as http:
        for origin, status in [("http://localhost:5173", 200), ("http://localhost:5174", 403),
                               ("https://dev.example:9000", 200)]:
            assert http.post("/mcp/ping", headers={"origin": origin}).status_code == status, origin


@pytest.mark.anyio
async def test_websocket_handshake_from_another_local_port_is_refused() -> None:
    with live_ws(ws_demo_server(), WsConfig.from_http(HttpConfig())) as live:
        url = live.url
        with pytest.raises(InvalidStatus) as refused:
            async with connect(url, additional_headers={"Origin": "http://localhost:5173"}):
                pass
        assert refused.value.response.status_code == 403
        async with ChatGptClient.connect(url, additional_headers={"Origin": f"http://localhost:{live.port}"}) as ok:
            assert (await ok.call("ping"))["result"] == {}
