"""`HttpRequest`, the one per-request object: what the app reads from it, and that a request and its scope
are freed by reference counting when the request ends, never left in a cycle for the garbage collector."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any

import orjson
import pytest

from hexmcp.adapters.http import HttpConfig, create_app
from hexmcp.adapters.http.request import NOT_TAKEN, REQUEST, HttpRequest, request_of
from tests.fixtures.demo_server import build_demo_server

HEADERS = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"), (b"accept", b"application/json"),
           (b"mcp-protocol-version", b"2025-11-25")]
CALL = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"text": "hi"}}})


def _scope(headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "client": ("127.0.0.1", 1)}


async def _serve(app: Any, scope: dict[str, Any]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": CALL, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def test_a_header_sent_twice_reads_as_its_first_value_and_accept_joins_them() -> None:
    request = HttpRequest(_scope([(b"accept", b"text/event-stream"), (b"x-a", b"1"), (b"accept", b"application/json"),
                                  (b"x-a", b"2")]))
    assert request.header(b"x-a") == b"1" and request.header(b"missing") is None
    assert request.accepts() == (True, True)
    assert HttpRequest(_scope([])).accepts() == (True, True)  # no Accept at all: anything


@pytest.mark.parametrize("from_protocol", [True, False], ids=["made-by-the-protocol", "made-by-the-app"])
def test_a_served_request_and_its_scope_go_when_the_request_ends(from_protocol: bool) -> None:
    app = create_app(build_demo_server(), HttpConfig())

    async def main() -> tuple[list[dict[str, Any]], weakref.ref[HttpRequest]]:
        scope = _scope(HEADERS)
        if from_protocol:
            scope[REQUEST] = HttpRequest(NOT_TAKEN, asyncio.get_running_loop(), False, True, True)
        seen: list[HttpRequest] = []
        guard = app.guard.denial
        app.guard.denial = lambda request: seen.append(request) or guard(request)  # type: ignore[method-assign]
        sent = await _serve(app, scope)
        assert REQUEST not in scope
        request = seen.pop()
        assert request.scope is scope and request.body == CALL and request.slot is None
        return sent, weakref.ref(request)

    gc.disable()  # whatever is still alive now is held by a cycle (or leaked), not by this test
    try:
        sent, request = asyncio.run(main())
        assert request() is None
    finally:
        gc.enable()
    assert sent[0]["status"] == 200 and b'"hi"' in sent[-1]["body"]


def test_an_app_that_never_takes_the_protocols_request_leaves_no_cycle() -> None:
    """The protocol's request holds no scope until an app takes it: under any other app it simply goes."""

    async def other_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def main() -> weakref.ref[HttpRequest]:
        scope = _scope(HEADERS)
        made = scope[REQUEST] = HttpRequest(NOT_TAKEN, asyncio.get_running_loop(), False, True)
        await _serve(other_app, scope)
        return weakref.ref(made)

    gc.disable()
    try:
        assert asyncio.run(main())() is None
    finally:
        gc.enable()


def test_request_of_gives_the_protocols_request_its_scope_and_makes_one_otherwise() -> None:
    scope = _scope(HEADERS)
    made = HttpRequest(NOT_TAKEN)
    scope[REQUEST] = made
    assert request_of(scope) is made and made.scope is scope
    bare = _scope(HEADERS)
    fresh = request_of(bare)
    assert fresh.scope is bare and REQUEST not in bare  # not stored: no cycle for a caller that keeps none
