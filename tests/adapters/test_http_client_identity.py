"""Per-client limits survive sessionless requests: the classifier's queue share follows the client.

REST calls open a core session each, so a share keyed on the session never capped a flooding router.
The identity is the authenticated principal's, else the peer address (or the one a trusted proxy forwards). A gate in front of the real model
holds the worker, so the queue's contents are known when each request arrives: the outcomes are
deterministic and no assertion depends on timing.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest
from hexmcp.adapters.http.auth import principal as kinds
from hexmcp.adapters.http.auth.principal import Principal
from hexmcp.adapters.http.client_identity import client_identity
from hexmcp.adapters.http.request import HttpRequest
from hexmcp.core import ErrorCode, McpServer
from hexmcp.tools.classification import ClassificationConfig
from hexmcp.tools.classification.mcp_tools import register_classification_tools

from .http_live import live_server

CAP = 2  # places one client may hold
QUEUE = 4  # places in all: the flood alone could fill them if it were not capped
FLOOD = 6
CALL = {"name": "classify_text", "arguments": {"text": "Prove that the square root of 2 is irrational"}}


def _request(headers: list[tuple[bytes, bytes]], client: tuple[str, int] | None = ("10.0.0.7", 50000)) -> HttpRequest:
    return HttpRequest({"type": "http", "headers": headers, "client": client})


def test_an_authenticated_principal_names_the_client_and_a_bare_bearer_value_does_not() -> None:
    request = _request([(b"authorization", b"Bearer some-value")])
    assert client_identity(request) == "address:10.0.0.7"  # no authentication configured: just a header
    request.principal = Principal(subject="alice", scopes=frozenset(), method=kinds.JWT)
    assert client_identity(request) == "oauth:alice"
    request.principal = Principal(subject="router-a", scopes=None, method=kinds.TOKEN)
    assert client_identity(request) == "token:router-a"  # the configured name, never the secret


def test_without_a_token_the_address_names_the_client() -> None:
    assert client_identity(_request([])) == client_identity(_request([], client=("10.0.0.7", 1))) == "address:10.0.0.7"
    assert client_identity(_request([(b"authorization", b"Basic abc")])) == "address:10.0.0.7"
    assert client_identity(_request([], client=None)) == "address:unknown"


@pytest.fixture(scope="module")
def classifier_server():
    server = McpServer("identity-test", "1")
    service = register_classification_tools(server, ClassificationConfig(workers=1, max_queue=QUEUE,
                                                                         max_queue_per_client=CAP))
    with live_server(server, trusted_proxies=["127.0.0.4"]) as live:
        yield live, service


def _client(live: Any, *, address: str, forwarded_for: str | None = None) -> httpx.AsyncClient:
    headers = {"x-forwarded-for": forwarded_for} if forwarded_for else {}
    return httpx.AsyncClient(base_url=live.base, headers=headers, timeout=60,
                             transport=httpx.AsyncHTTPTransport(local_address=address))


async def _wait_for(condition: Any) -> None:
    async with asyncio.timeout(30):
        while not condition():
            await asyncio.sleep(0.01)


@pytest.mark.slow
@pytest.mark.parametrize("by", ["address", "proxy"])
def test_a_flooding_rest_client_is_capped_and_another_client_is_still_served(classifier_server, by) -> None:
    live, service = classifier_server
    if by == "address":  # two machines: two loopback addresses
        flooder = {"address": "127.0.0.2"}
        other = {"address": "127.0.0.3"}
    else:  # two routers behind one trusted proxy, which names each
        flooder = {"address": "127.0.0.4", "forwarded_for": "203.0.113.1"}
        other = {"address": "127.0.0.4", "forwarded_for": "203.0.113.2"}

    async def scenario() -> tuple[list[httpx.Response], httpx.Response]:
        async with _client(live, **flooder) as warm:  # load the model before the gate goes up
            assert (await warm.post("/mcp/tools/call", json=CALL)).status_code == 200
        pool = service._pool
        gate = threading.Event()
        model = pool._process  # the real model, behind a gate the test opens

        def gated(item: Any) -> Any:
            gate.wait(60)
            return model(item)

        pool._process = gated
        try:
            async with _client(live, **flooder) as flood_client, _client(live, **other) as other_client:
                flood = [asyncio.ensure_future(flood_client.post("/mcp/tools/call", json=CALL)) for _ in range(FLOOD)]
                # The flooder's share is taken and the rest of its requests refused, all while the gate is shut.
                await _wait_for(lambda: sum(task.done() for task in flood) == FLOOD - CAP)
                served = asyncio.ensure_future(other_client.post("/mcp/tools/call", json=CALL))
                await _wait_for(lambda: pool.waiting == CAP + 1 or served.done())
                gate.set()
                return list(await asyncio.gather(*flood)), await served
        finally:
            gate.set()
            pool._process = model

    flood, served = asyncio.run(scenario())
    assert served.status_code == 200, served.text
    assert set(served.json()["structuredContent"]) >= {"class", "confidence"}
    refused = [r for r in flood if r.status_code == 503]
    assert len(refused) == FLOOD - CAP
    assert all(r.json()["error"] == ErrorCode.SERVER_BUSY.value and "limit per client" in r.json()["message"]
               for r in refused)
    assert [r.status_code for r in flood].count(200) == CAP
