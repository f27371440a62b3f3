"""What a client can make a session hold through resource subscriptions is bounded (issue 30).

Before: `resources/subscribe` kept any string, of any length, without limit, for the session's life, and
`subscriptions/listen` held any list of them. Now a session holds at most `ServerOptions.max_subscriptions`
URIs (the next is refused with -32600 until it unsubscribes), each a URI of at most `max_uri_chars`
(-32602 otherwise); what it subscribed to before the refusals is kept and still notified.
"""

from __future__ import annotations

import json

import pytest

from hexmcp.core import ServerOptions
from tests.adapters.http_live import live_server
from tests.adapters.http_wire import Wire, modern_params
from tests.fixtures.demo_server import build_demo_server

pytestmark = pytest.mark.timeout(60)

OPTIONS = ServerOptions()
CAP = OPTIONS.max_subscriptions


@pytest.fixture(scope="module")
def live():
    with live_server(build_demo_server()) as server:
        yield server


def _error(wire: Wire, method: str, params: dict) -> dict:
    response, [answer] = wire.request(method, params)
    assert "error" in answer, answer
    return answer["error"]


def test_a_session_holds_at_most_the_cap_of_subscriptions(live, wire: Wire) -> None:
    wire.initialize()
    for n in range(CAP - 1):
        assert wire.request("resources/subscribe", {"uri": f"demo://items/item-{n}"})[1][0]["result"] == {}
    assert wire.request("resources/subscribe", {"uri": "demo://greeting"})[1][0]["result"] == {}
    error = _error(wire, "resources/subscribe", {"uri": "demo://items/one-too-many"})
    assert error["code"] == -32600 and "Too many subscriptions" in error["message"]
    assert error["data"]["limit"] == CAP
    # Subscribing again to a URI it holds, and making room first, are fine.
    assert wire.request("resources/subscribe", {"uri": "demo://greeting"})[1][0]["result"] == {}
    assert wire.request("resources/unsubscribe", {"uri": "demo://items/item-0"})[1][0]["result"] == {}
    assert wire.request("resources/subscribe", {"uri": "demo://items/one-too-many"})[1][0]["result"] == {}
    held = live.app.mcp.sessions.get(wire.session_id).core.subscriptions
    assert len(held) == CAP and "demo://greeting" in held and "demo://items/item-0" not in held


def test_a_huge_or_malformed_uri_is_refused_and_not_kept(live, wire: Wire) -> None:
    wire.initialize()
    for uri in ("demo://" + "x" * (2**20), "no scheme at all", "demo://line\nbreak"):
        error = _error(wire, "resources/subscribe", {"uri": uri})
        assert error["code"] == -32602 and error["data"]["path"] == "$.uri"
    assert wire.request("resources/subscribe", {"uri": "demo://greeting"})[1][0]["result"] == {}
    assert live.app.mcp.sessions.get(wire.session_id).core.subscriptions == {"demo://greeting"}


def test_a_listener_names_at_most_the_cap_of_resources(live, wire: Wire) -> None:
    uris = [f"demo://items/{n}" for n in range(CAP + 1)]
    message = {"jsonrpc": "2.0", "id": "L1", "method": "subscriptions/listen",
               "params": modern_params({"notifications": {"resourceSubscriptions": uris}})}
    headers = wire.headers({"mcp-method": "subscriptions/listen"}, version="2026-07-28")
    [answer] = wire.messages(wire.http.post("/mcp", content=json.dumps(message), headers=headers))
    assert answer["id"] == "L1" and answer["error"]["code"] == -32602
    assert answer["error"]["data"]["path"] == "$.notifications.resourceSubscriptions"
    assert len(live.server.subscriptions) == 0  # nothing held open for it
