"""A sessionless JSON-RPC POST to /mcp in the default (session) mode: the vLLM semantic-router's "Style 1".

Served one-shot (ADR 0501): no initialize, no Mcp-Session-Id, answered with the request's id. A request
naming an unknown session still gets 404, and every refusal carries the id it could read.
"""

from __future__ import annotations

import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexmcp.wire import jsonrpc
from hexmcp.core import ErrorCode, versions
from tests.adapters.http_live import live_server
from tests.adapters.http_wire import Wire
from tests.fixtures.demo_server import build_demo_server

pytestmark = pytest.mark.timeout(60)
ECHO = {"name": "echo", "arguments": {"text": "style one"}}
request_ids = st.one_of(st.integers(min_value=-(2**53), max_value=2**53), st.text(min_size=0, max_size=20))


@pytest.fixture(scope="module")
def live():
    with live_server(build_demo_server()) as server:
        assert not server.config.stateless
        yield server


def test_a_bare_tools_call_is_answered_without_a_session(wire) -> None:
    response, [answer] = wire.request("tools/call", ECHO)
    assert response.status_code == 200, response.text
    assert answer["id"] == 1 and answer["result"]["content"][0]["text"] == "style one"
    assert "mcp-session-id" not in response.headers  # one-shot: nothing to keep


@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
def test_the_version_header_names_the_version_assumed(wire, version) -> None:
    response, [answer] = wire.request("tools/list", version=version)
    assert response.status_code == 200, response.text
    assert {tool["name"] for tool in answer["result"]["tools"]} >= {"echo", "add"}


def test_an_unknown_session_is_still_404_with_the_request_id(wire) -> None:
    wire.session_id = "no-such-session"
    response = wire.post({"jsonrpc": "2.0", "id": "lost-7", "method": "tools/call", "params": ECHO})
    assert response.status_code == 404
    body = response.json()
    assert body["id"] == "lost-7"
    assert body["error"]["code"] == jsonrpc.ERROR_CODES[ErrorCode.SESSION_NOT_FOUND]


def test_a_sessionless_notification_is_accepted(wire) -> None:
    assert wire.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202


def test_a_sessionless_batch_outside_2025_03_26_is_refused_plainly(wire) -> None:
    response = wire.post([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert response.status_code == 400
    assert "batches are not allowed" in response.json()["error"]["message"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(request_id=request_ids, tool=st.sampled_from(["no_such_tool", "echo"]),
       version=st.sampled_from([None, *versions.HANDSHAKE_VERSIONS]))
def test_every_sessionless_error_carries_the_request_id(wire, request_id, tool, version) -> None:
    # "no_such_tool" is a protocol error; "echo" without its argument is invalid params up to 2025-06-18 and
    # an isError result from 2025-11-25 on (SEP-1303; a headerless POST gets 2025-11-25): all name the id.
    response = wire.post({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                          "params": {"name": tool, "arguments": {}}}, version=version)
    body = response.json()
    assert body["id"] == request_id
    served = version or versions.LATEST_HANDSHAKE_VERSION
    if tool == "echo" and versions.features(served).argument_errors_as_results:
        assert body["result"]["isError"] is True and "'text' is a required property" in body["result"]["content"][0]["text"]
    else:
        assert body["error"]["code"] == jsonrpc.INVALID_PARAMS


@pytest.mark.parametrize("version", [None, versions.LATEST_HANDSHAKE_VERSION, versions.V2026_07_28])
def test_a_refusal_before_parsing_still_names_the_request(wire, version) -> None:
    # A wrong Accept is refused before the body is parsed; the id is read from the body for the answer.
    response = wire.post({"jsonrpc": "2.0", "id": "accept-9", "method": "tools/list"}, {"accept": "text/html"},
                         version=version)
    assert response.status_code == 406
    assert response.json()["id"] == "accept-9"


def test_a_busy_server_names_the_request_it_refuses() -> None:
    with live_server(build_demo_server(), max_concurrent_requests=1) as live:
        wire, other = Wire(live.base), Wire(live.base)
        slow = threading.Thread(target=wire.request, args=("tools/call", {"name": "slow", "arguments": {"seconds": 1.5}}))
        slow.start()
        try:
            for _ in range(200):  # until the slow call holds the only slot
                response = other.post({"jsonrpc": "2.0", "id": 42, "method": "ping"})
                if response.status_code == 503:
                    break
            assert response.status_code == 503
            assert response.json()["id"] == 42
        finally:
            slow.join()
            wire.close()
            other.close()
