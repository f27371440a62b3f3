"""Two hexmcp instances behind real nginx (deploy/nginx/hexmcp.conf.template), round-robin.

Through the proxy: the router's REST client, the official SDK's Streamable HTTP client against
`--stateless` instances, and a WebSocket; then one instance is stopped under load and no request that
had not reached it is lost.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from hexmcp.client import SyncClient
from hexmcp.client.target import Target

from ..fixtures.ws_live import ChatGptClient
from ..support.nginx import nginx_in_front
from ..support.serve_process import LIGHT, serve_process

pytestmark = pytest.mark.timeout(180)
INSTANCE = (*LIGHT, "--stateless", "--drain-timeout", "10")
SECRET = {"HEXMCP_STATE_SECRET": "nginx-test-secret"}


@pytest.fixture
def fleet(tmp_path):
    with serve_process(*INSTANCE, env=SECRET) as a, serve_process(*INSTANCE, env=SECRET) as b:
        with nginx_in_front(tmp_path, (a.port, b.port)) as proxy:
            yield proxy, a, b


def _health_pids(base: str, rounds: int) -> collections.Counter[int]:
    with httpx.Client(base_url=base, timeout=5) as client:
        return collections.Counter(client.get("/health").json()["pid"] for _ in range(rounds))


def test_round_robin_and_every_client_works_through_the_proxy(fleet) -> None:
    proxy, a, b = fleet
    pids = _health_pids(proxy.base, 6)
    assert set(pids) == {a.health().json()["pid"], b.health().json()["pid"]}
    assert set(pids.values()) == {3}  # strict alternation: round-robin

    with SyncClient(Target.rest(f"{proxy.base}/mcp")) as rest:  # the router's REST client
        names = {tool.name for tool in rest.all_tools()}
        assert "listModels" in names
        for _ in range(4):  # each call on whichever instance is next
            rest.ping()

    async def sdk() -> None:
        # Stateless: initialize, tools/list and the rest land on different instances and it does not matter.
        async with streamable_http_client(f"{proxy.base}/mcp") as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                for _ in range(4):
                    assert "listModels" in {tool.name for tool in (await session.list_tools()).tools}

    async def websocket() -> None:
        async with ChatGptClient.connect(f"ws://127.0.0.1:{proxy.port}/ws") as ws:
            await ws.initialize()
            for _ in range(4):
                answer = await ws.call("tools/list")
                assert "listModels" in {tool["name"] for tool in answer["result"]["tools"]}

    asyncio.run(sdk())
    asyncio.run(websocket())


class Load:
    """Threads sending requests through the proxy until stopped; every outcome is kept."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.outcomes: list[tuple[str, int | str]] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(kind,), daemon=True)
                         for kind in ("rest-list", "rest-list", "jsonrpc-list", "health")]

    def _run(self, kind: str) -> None:
        with httpx.Client(base_url=self.base, timeout=20) as client:
            while not self._stop.is_set():
                try:
                    if kind == "rest-list":
                        status = client.post("/mcp/tools/list", json={}).status_code
                    elif kind == "jsonrpc-list":
                        status = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                             headers={"accept": "application/json, text/event-stream"}).status_code
                    else:
                        status = client.get("/health").status_code
                except httpx.HTTPError as error:
                    status = type(error).__name__
                self.outcomes.append((kind, status))

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)


def test_stopping_one_instance_under_load_loses_no_request(fleet) -> None:
    proxy, a, b = fleet
    with Load(proxy.base) as load:
        time.sleep(2.0)
        before = len(load.outcomes)
        assert a.terminate() == 0  # SIGTERM: drains, exits 0
        time.sleep(2.0)
    failures = [outcome for outcome in load.outcomes if outcome[1] != 200]
    assert failures == [], f"{len(failures)} of {len(load.outcomes)} failed: {failures[:10]}\n{proxy.error_log()}"
    assert before > 20 and len(load.outcomes) > before + 20  # load ran on both sides of the stop
    assert b.health().status_code == 200


TOKEN = "nginx-test-token-0123456789abcdef"
AUTHORIZED = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def guarded_fleet(tmp_path):
    """Two instances as a deployment runs them: on every interface (so a token is required), one token."""
    env = {**SECRET, "HEXMCP_AUTH_TOKEN": TOKEN}
    with serve_process(*INSTANCE, "--host", "0.0.0.0", env=env) as a, \
            serve_process(*INSTANCE, "--host", "0.0.0.0", env=env) as b:
        with nginx_in_front(tmp_path, (a.port, b.port)) as proxy:
            yield proxy


def test_the_token_is_required_and_passed_through_the_proxy_to_every_instance(guarded_fleet) -> None:
    proxy = guarded_fleet
    directives = [line for line in proxy_template().splitlines() if not line.lstrip().startswith("#")]
    assert not any("authorization" in line.lower() for line in directives)  # passed through, never rewritten
    with httpx.Client(base_url=proxy.base, timeout=5) as client:
        for _ in range(4):  # both instances, round-robin
            refused = client.post("/mcp/tools/list", json={})
            assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
            assert client.post("/mcp/tools/list", json={}, headers=AUTHORIZED).status_code == 200
            jsonrpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            accept = {"accept": "application/json, text/event-stream"}
            assert client.post("/mcp", json=jsonrpc, headers=accept).status_code == 401
            assert client.post("/mcp", json=jsonrpc, headers={**accept, **AUTHORIZED}).status_code == 200
            assert client.get("/metrics").status_code == 401
            assert client.get("/livez").status_code == 200 and client.get("/health").status_code == 200

    async def websocket() -> None:
        async with ChatGptClient.connect(f"ws://127.0.0.1:{proxy.port}/ws", additional_headers=AUTHORIZED) as ws:
            await ws.initialize()
            assert "listModels" in {tool["name"] for tool in (await ws.call("tools/list"))["result"]["tools"]}

    asyncio.run(websocket())


def proxy_template() -> str:
    from ..support.nginx import TEMPLATE

    return TEMPLATE.read_text()
