"""The WebSocket endpoint mounted in the HTTP adapter's app, as `hexmcp serve` will mount it.

One line: `create_app(server, http_config, extra_routes={"/ws": WsEndpoint(server, WsConfig.from_http(...))})`.
The HTTP app's own guards (Host/Origin, bearer) run before the socket is accepted; `/mcp` and `/ws`
serve the same McpServer side by side.
"""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from hexmcp.adapters.http import HttpConfig, create_app
from hexmcp.adapters.http.runner import uvicorn_config
from hexmcp.adapters.ws import WsConfig, WsEndpoint, WsUvicornServer
from hexmcp.adapters.ws.endpoint import UPGRADE_REQUIRED

from ..fixtures.ws_live import ChatGptClient, ws_demo_server
from ..support.net import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

TOKEN = "shared-token"


@pytest.fixture(scope="module")
def mounted():
    server = ws_demo_server()
    http_config = HttpConfig(port=free_port(), auth_token=TOKEN)
    endpoint = WsEndpoint(server, WsConfig.from_http(http_config))
    app = create_app(server, http_config, extra_routes={endpoint.config.path: endpoint})
    uvicorn_server = WsUvicornServer(uvicorn_config(app, http_config, log_level="error",
                                                    **endpoint.config.uvicorn_options()), [endpoint])
    thread = threading.Thread(target=uvicorn_server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uvicorn_server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.01)
    yield http_config
    uvicorn_server.should_exit = True
    thread.join(timeout=20)


async def test_socket_and_http_serve_the_same_server(mounted) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with ChatGptClient.connect(f"ws://127.0.0.1:{mounted.port}/ws", additional_headers=auth) as client:
        await client.initialize()
        answer = await client.call("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
        assert answer["result"]["structuredContent"] == {"sum": 2}
    async with httpx.AsyncClient() as http:
        health = await http.get(f"http://127.0.0.1:{mounted.port}/health")
        assert health.status_code == 200
        plain = await http.get(f"http://127.0.0.1:{mounted.port}/ws", headers=auth)
        assert plain.status_code == UPGRADE_REQUIRED


async def test_the_http_apps_guards_refuse_the_handshake(mounted) -> None:
    url = f"ws://127.0.0.1:{mounted.port}/ws"
    cases = [({}, 401, -32010), ({"Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"}, 403, -32011)]
    for headers, status, code in cases:
        with pytest.raises(InvalidStatus) as refused:
            async with connect(url, additional_headers=headers):
                pass
        # The HTTP app's middlewares answer the handshake like the socket's own checks: status and JSON-RPC body.
        response = refused.value.response
        assert response.status_code == status
        error = json.loads(response.body)["error"]
        assert error["code"] == code and error["data"]["eventId"]
        if status == 401:
            assert response.headers["WWW-Authenticate"] == 'Bearer realm="hexmcp"'


async def test_a_socket_on_an_unknown_path_gets_404(mounted) -> None:
    with pytest.raises(InvalidStatus) as refused:
        async with connect(f"ws://127.0.0.1:{mounted.port}/nowhere", additional_headers={"Authorization": f"Bearer {TOKEN}"}):
            pass
    assert refused.value.response.status_code == 404
