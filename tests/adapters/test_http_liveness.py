"""`/livez`, the liveness probe's endpoint: 200 while the process runs, whatever /health says (loading,
failed start-up work, at the concurrency cap, draining), without a token, and telling nothing about the
server."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from hexmcp.adapters.http.liveness import LIVENESS_PATH
from hexmcp.core import McpServer

from .http_live import live_server

pytestmark = pytest.mark.timeout(60)
TOKEN = "liveness-test-token"


def test_livez_answers_while_health_says_starting_and_without_a_token() -> None:
    loaded = asyncio.Event()

    async def never_loads() -> None:
        await loaded.wait()

    with live_server(McpServer("t", "0"), auth_token=TOKEN, ready=lambda: loaded.is_set(),
                     on_startup=[never_loads]) as live:
        assert httpx.get(f"{live.base}/health", timeout=5).json()["status"] == "starting"
        answer = httpx.get(f"{live.base}{LIVENESS_PATH}", timeout=5)
        assert (answer.status_code, answer.text) == (200, "ok")
        assert httpx.head(f"{live.base}{LIVENESS_PATH}", timeout=5).status_code == 200
        assert httpx.post(f"{live.base}{LIVENESS_PATH}", timeout=5).status_code == 405
        assert httpx.post(f"{live.base}/mcp/ping", json={}, timeout=5).status_code == 401  # the rest stays shut


def test_livez_gets_through_a_server_at_its_concurrency_cap() -> None:
    with live_server(McpServer("t", "0"), max_concurrent_requests=1) as live:
        live.app.limit.in_flight = live.app.limit.limit  # every slot taken, as by long requests
        try:
            assert httpx.post(f"{live.base}/mcp/ping", json={}, timeout=5).status_code == 503
            assert httpx.get(f"{live.base}{LIVENESS_PATH}", timeout=5).status_code == 200
        finally:
            live.app.limit.in_flight = 0


def test_livez_answers_on_a_kept_alive_connection_while_draining() -> None:
    with live_server(McpServer("t", "0")) as live:
        with httpx.Client(base_url=live.base, timeout=5) as client:
            assert client.get(LIVENESS_PATH).status_code == 200  # the connection is now kept alive
            live.app.stopping = True
            try:
                assert client.get("/health").json()["status"] == "draining"
                assert client.post("/mcp/ping", json={}).status_code == 503
                assert client.get(LIVENESS_PATH).status_code == 200
            finally:
                live.app.stopping = False
