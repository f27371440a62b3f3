"""The coalescing transport under the real uvicorn protocol (adapters/http/uvicorn_fence.py): whatever the
app does after `http.response.start` (no body at all, a body in pieces with pauses, a stream that sends
nothing yet), what it wrote reaches the client without waiting for more."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from hexmcp.adapters.http.asgi import Receive, Scope, Send
from hexmcp.core import McpServer

from .http_live import live_server

pytestmark = pytest.mark.timeout(30)

BODY = b'{"answer": 42}'
LENGTH = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]


async def declared_length(scope: Scope, receive: Receive, send: Send) -> None:
    """Declares its length; a HEAD gets no body from uvicorn, a GET gets it in two pieces with a pause."""
    await send({"type": "http.response.start", "status": 200, "headers": LENGTH})
    await asyncio.sleep(0.05)
    await send({"type": "http.response.body", "body": BODY[:5], "more_body": True})
    await asyncio.sleep(0.05)
    await send({"type": "http.response.body", "body": BODY[5:]})


async def stream_without_events(scope: Scope, receive: Receive, send: Send) -> None:
    """A chunked stream that sends its head and then nothing until the client leaves."""
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    while (await receive())["type"] != "http.disconnect":
        pass


@pytest.fixture(scope="module")
def live() -> Any:
    routes = {"/declared": declared_length, "/stream": stream_without_events}
    with live_server(McpServer("coalesce-live", "1"), extra_routes=routes) as server:
        yield server


def test_a_head_request_gets_its_held_head_when_the_response_completes(live) -> None:
    response = httpx.head(live.base + "/declared", timeout=5)
    assert response.status_code == 200 and response.headers["content-length"] == str(len(BODY))


def test_a_body_sent_in_pieces_after_a_pause_arrives_whole(live) -> None:
    with httpx.Client(timeout=5) as client:
        for _ in range(2):  # and the kept-alive connection's next response is held and sent the same way
            response = client.get(live.base + "/declared")
            assert response.status_code == 200 and response.content == BODY


def test_a_stream_head_arrives_before_any_event(live) -> None:
    with httpx.stream("GET", live.base + "/stream", timeout=5) as response:
        assert response.status_code == 200 and response.headers["content-type"] == "text/event-stream"
