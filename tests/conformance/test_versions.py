"""The version audit: every protocol version, on every transport, held to that version's schema and spec.

Where the property suite (test_prop_schema.py) draws random traffic, this walks one fixed conversation
per (transport, version) pair against `tests.fixtures.rich_server` (the demo server plus every field a
version may lack), on real servers: a stdio subprocess, and one uvicorn serving Streamable HTTP, REST
and WebSocket in both dialects. 2026-07-28 runs on every transport, with its `_meta` envelope on each
request and no handshake.

Every server message is checked twice: against the published schema (`schemas.Transcript`), and with
each object closed to the members its version declares (`schemas.validate_result_members`), since the
published schemas admit any extra member and so would let `structuredContent` reach a 2024-11-05
client. Then, per version: negotiation (known, unknown, older, newer and malformed versions), which
methods answer and which are -32601, capabilities against the methods behind them, JSON-RPC batches
(2025-03-26 only), cancellation and list-change notifications, and on HTTP the MCP-Protocol-Version
header with and without a session.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Iterator

import httpx
import pytest

from hexmcp.core import versions
from hexmcp.core.meta import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION
from hexmcp.wire.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND

from ..fixtures.rich_server import RICH_URI, build_rich_server
from ..support import schemas
from ..support.peer import initialize_params
from .drivers import Driver, HttpDriver
from .drivers.base import key
from .targets import DEFAULT_TARGETS, STREAM_TARGETS, HexmcpServers, Target

pytestmark = pytest.mark.timeout(120)

RICH_STDIO = [sys.executable, "-m", "tests.fixtures.rich_server"]
MODERN = versions.STATELESS_VERSIONS[0]
UNSUPPORTED_PROTOCOL_VERSION = -32022
MISSING_CLIENT_CAPABILITY = -32021
SLOW = {"name": "slow", "arguments": {"seconds": 1.5, "steps": 3}}

# One request of each kind a server answers, with the methods each version lacks answered -32601.
CALLS: list[tuple[str, dict[str, Any] | None]] = [
    ("ping", None),
    ("tools/list", {}),
    ("tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
    ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
    ("tools/call", {"name": "every_block", "arguments": {}}),
    ("tools/call", {"name": "link", "arguments": {"name": "apple"}}),
    ("tools/call", {"name": "refuse", "arguments": {"reason": "no"}}),
    ("tools/call", {"name": "chatty", "arguments": {}}),
    ("tools/call", {"name": "slow", "arguments": {"seconds": 0.03}, "_meta": {"progressToken": "p1"}}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": RICH_URI}),
    ("resources/read", {"uri": "rich://pages/7"}),
    ("resources/subscribe", {"uri": RICH_URI}),
    ("resources/unsubscribe", {"uri": RICH_URI}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "summary", "arguments": {"topic": "MCP"}}),
    ("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "style", "value": "p"}}),
    ("completion/complete", {"ref": {"type": "ref/resource", "uri": "demo://items/{item_id}"},
                             "argument": {"name": "item_id", "value": "a"}}),
    ("logging/setLevel", {"level": "info"}),
    ("server/discover", {}),
]
HANDSHAKE_ONLY = {"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
STATELESS_ONLY = {"server/discover"}
# What each capability promises: a method that must then answer with a result (handshake versions).
CAPABILITY_METHODS = {"tools": "tools/list", "resources": "resources/list", "prompts": "prompts/list",
                      "logging": "logging/setLevel", "completions": "completion/complete"}


@pytest.fixture(scope="module")
def servers() -> Iterator[HexmcpServers]:
    servers = HexmcpServers(build_rich_server, RICH_STDIO)
    yield servers
    servers.stop()


@pytest.fixture(scope="module", params=DEFAULT_TARGETS)
def served(request: pytest.FixtureRequest, servers: HexmcpServers) -> Target:
    return servers.target(request.param)


@pytest.fixture(scope="module", params=STREAM_TARGETS)
def streamed(request: pytest.FixtureRequest, servers: HexmcpServers) -> Target:
    return servers.target(request.param)


@pytest.fixture(scope="module", params=[t for t in STREAM_TARGETS if t != "http"])
def one_connection(request: pytest.FixtureRequest, servers: HexmcpServers) -> Target:
    """The transports where a connection carries requests and what the server pushes alike. Over HTTP an
    answer comes with its POST and pushes on the GET stream: test_http_disconnects.py (cancelling),
    test_http_transport.py (list changes), test_http_stateless_era.py (the listen as a streamed POST)."""
    return servers.target(request.param)


class Speaker:
    """One connection speaking one version: the handshake, or 2026-07-28's envelope on every request.
    Every message the server sends is schema-checked, and every result and notification closed-checked."""

    def __init__(self, target: Target, version: str) -> None:
        self.driver: Driver = target.connect()
        self.asked = version
        self.stateless = version in versions.STATELESS_VERSIONS
        self.initialized: dict[str, Any] | None = None
        if self.stateless:
            if isinstance(self.driver, HttpDriver):
                self.driver.initialize(version)  # no handshake: the routing headers from now on
            self.driver.version = self.driver.transcript.version = version
        else:
            self.initialized = self.driver.initialize(version)["result"]
        self.version: str = self.driver.version  # type: ignore[assignment]

    def send(self, method: str, params: dict[str, Any] | None = None, request_id: Any = None) -> Any:
        if self.stateless:
            params = dict(params or {})
            params["_meta"] = {META_PROTOCOL_VERSION: self.version, META_CLIENT_CAPABILITIES: {},
                               **params.get("_meta", {})}
        request_id = self.driver.next_id() if request_id is None else request_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.driver.send(message)
        return request_id

    def call(self, method: str, params: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The answer to one request, and the notifications that came with it; all of it checked."""
        request_id = self.send(method, params)
        answers, others = self.driver.collect({key(request_id)}, timeout=10)
        late_answers, late_others = self.driver.drain(0.1)
        everything = [*(m for ms in answers.values() for m in ms), *others,
                      *(m for ms in late_answers.values() for m in ms), *late_others]
        for message in everything:
            self.check(message, method)
        [answer] = answers[key(request_id)]
        return answer, [*others, *late_others]

    def check(self, message: Any, method: str | None = None) -> None:
        self.driver.transcript.received(message)
        if isinstance(message, list):
            return
        if "result" in message and method is not None:
            schemas.validate_result_members(self.version, method, message["result"])
        elif "method" in message and "id" not in message:
            schemas.validate_notification_members(self.version, message)

    def close(self) -> None:
        self.driver.close()


@pytest.fixture
def speakers() -> Iterator[list[Any]]:
    """Connections a test opened (speakers, bare drivers), closed when it ends."""
    opened: list[Any] = []
    yield opened
    for connection in opened:
        connection.close()


def speak(speakers: list[Speaker], target: Target, version: str) -> Speaker:
    speaker = Speaker(target, version)
    speakers.append(speaker)
    return speaker


def error_code(answer: dict[str, Any]) -> int | None:
    return answer["error"]["code"] if "error" in answer else None


# --- every method, every version, every transport --------------------------------------------------

@pytest.mark.parametrize("version", versions.SUPPORTED_VERSIONS)
def test_every_answer_carries_only_what_its_version_has(served: Target, version: str,
                                                        speakers: list[Speaker]) -> None:
    speaker = speak(speakers, served, version)
    assert speaker.version == version
    features = versions.features(version)
    for method, params in CALLS:
        answer, notifications = speaker.call(method, params)
        lacking = (method in HANDSHAKE_ONLY) if speaker.stateless else (method in STATELESS_ONLY)
        if lacking:
            assert error_code(answer) == METHOD_NOT_FOUND, (method, answer)
            continue
        assert "result" in answer, (method, params, answer)
        result = answer["result"]
        assert ("resultType" in result) == speaker.stateless, (method, result)
        if method == "tools/call" and params and params["name"] == "add":
            assert ("structuredContent" in result) == features.structured_output, result
        if method == "tools/call" and params and params["name"] == "slow" and speaker.driver.sessionful:
            progress = [m for m in notifications if m.get("method") == "notifications/progress"]
            assert [m["params"]["progress"] for m in progress] == [1, 2, 3], notifications
        if method == "tools/call" and params and params["name"] == "every_block":
            kinds = [block["type"] for block in result["content"]]
            assert ("audio" in kinds) == features.audio_content and ("resource_link" in kinds) == features.resource_links
    # A server-to-client method, and one no version has: -32601 on every version.
    for method in ("sampling/createMessage", "tools/frobnicate"):
        answer, _ = speaker.call(method, {})
        assert error_code(answer) == METHOD_NOT_FOUND, answer


@pytest.mark.parametrize("version", versions.SUPPORTED_VERSIONS)
def test_capabilities_promise_only_methods_that_answer(served: Target, version: str, speakers: list[Speaker]) -> None:
    speaker = speak(speakers, served, version)
    if speaker.stateless:
        capabilities = speaker.call("server/discover", {})[0]["result"]["capabilities"]
    else:
        assert speaker.initialized is not None
        capabilities = speaker.initialized["capabilities"]
    params = dict(CALLS)
    for capability, method in CAPABILITY_METHODS.items():
        if capability not in capabilities or (method in HANDSHAKE_ONLY and speaker.stateless):
            continue
        answer, _ = speaker.call(method, params.get(method) or {})
        assert "result" in answer, (capability, answer)
    if capabilities.get("resources", {}).get("subscribe"):
        assert "result" in speaker.call("resources/subscribe", {"uri": RICH_URI})[0]
    if "extensions" not in capabilities:  # tasks are the tasks extension's: only where it is declared
        assert error_code(speaker.call("tasks/get", {"taskId": "t"})[0]) == METHOD_NOT_FOUND


@pytest.mark.parametrize("version", versions.SUPPORTED_VERSIONS)
def test_log_messages_follow_the_level_the_version_sets(streamed: Target, version: str,
                                                        speakers: list[Speaker]) -> None:
    """Handshake versions set the level once (logging/setLevel); 2026-07-28 names it in each request's `_meta`."""
    speaker = speak(speakers, streamed, version)
    params: dict[str, Any] = {"name": "chatty", "arguments": {}}
    if speaker.stateless:
        params["_meta"] = {"io.modelcontextprotocol/logLevel": "info"}
    else:
        assert "result" in speaker.call("logging/setLevel", {"level": "info"})[0]
    answer, notifications = speaker.call("tools/call", params)
    assert "result" in answer
    levels = [m["params"]["level"] for m in notifications if m.get("method") == "notifications/message"]
    assert levels == ["info", "error"], notifications


# --- argument refusals (SEP-1303): -32602 up to 2025-06-18, an isError result from 2025-11-25 on ----------

BAD_ARGUMENTS = {"name": "add", "arguments": {"a": "one", "b": 2}}


@pytest.mark.parametrize("version", versions.SUPPORTED_VERSIONS)
def test_arguments_failing_the_schema_answer_the_form_of_the_version(served: Target, version: str,
                                                                     speakers: list[Speaker]) -> None:
    speaker = speak(speakers, served, version)
    answer, _ = speaker.call("tools/call", BAD_ARGUMENTS)
    as_result = versions.features(version).argument_errors_as_results and served.name != "rest"
    assert as_result == (version in (versions.V2025_11_25, versions.V2026_07_28) and served.name != "rest")
    if as_result:
        result = answer["result"]
        assert result["isError"] is True, result
        [block] = result["content"]
        assert block["type"] == "text"
        assert block["text"].startswith("Invalid arguments for tool 'add': argument a: 'one' is not of type 'integer'")
        event_id = result["_meta"]["io.hexmcp/eventId"]
        assert f"(eventId {event_id})" in block["text"]
        assert result["_meta"]["io.hexmcp/errorCode"] == "invalid_params"
        assert result["_meta"]["io.hexmcp/errorData"]["path"] == "$.arguments.a"
    else:  # the older versions, and the REST dialect's 400 on every version
        assert error_code(answer) == INVALID_PARAMS, answer
        assert answer["error"]["message"].startswith("Invalid arguments for tool 'add': argument a: 'one' is not of type 'integer'")
        assert answer["error"]["data"]["path"] == "$.arguments.a"


@pytest.mark.parametrize("version", versions.SUPPORTED_VERSIONS)
def test_an_unknown_tool_stays_invalid_params_on_every_version(served: Target, version: str,
                                                               speakers: list[Speaker]) -> None:
    speaker = speak(speakers, served, version)
    answer, _ = speaker.call("tools/call", {"name": "no_such_tool", "arguments": {}})
    assert error_code(answer) == INVALID_PARAMS, answer
    assert answer["error"]["data"]["path"] == "$.name"
    # A request that is not a CallToolRequest (arguments not an object) is no tool error either.
    answer, _ = speaker.call("tools/call", {"name": "add", "arguments": [1, 2]})
    assert error_code(answer) == INVALID_PARAMS, answer


# --- negotiation -----------------------------------------------------------------------------------

@pytest.mark.parametrize("asked", ["2024-10-07", "2099-01-01", MODERN, "garbage", "", " 2025-06-18"])
def test_initialize_with_a_version_we_do_not_speak_gets_our_latest(served: Target, asked: str,
                                                                   speakers: list[Speaker]) -> None:
    driver = served.connect()
    speakers.append(driver)
    params = initialize_params(versions.LATEST_HANDSHAKE_VERSION) | {"protocolVersion": asked}
    answer = driver.request("initialize", params)
    assert answer is not None and answer["result"]["protocolVersion"] == versions.LATEST_HANDSHAKE_VERSION, answer
    schemas.validate_result_members(versions.LATEST_HANDSHAKE_VERSION, "initialize", answer["result"])


@pytest.mark.parametrize("asked", [20250618, None])
def test_a_protocol_version_that_is_not_a_string_is_invalid_params(served: Target, asked: Any,
                                                                  speakers: list[Speaker]) -> None:
    driver = served.connect()
    speakers.append(driver)
    answer = driver.request("initialize", initialize_params(versions.LATEST_HANDSHAKE_VERSION) | {"protocolVersion": asked})
    assert answer is not None and error_code(answer) == INVALID_PARAMS, answer


@pytest.mark.parametrize("asked", ["2099-01-01", "2025-06-18", "garbage"])
def test_a_stateless_request_naming_another_version_is_refused_with_the_list(served: Target, asked: str,
                                                                             speakers: list[Speaker]) -> None:
    driver = served.connect()
    speakers.append(driver)
    params = {"_meta": {META_PROTOCOL_VERSION: asked, META_CLIENT_CAPABILITIES: {}}}
    if isinstance(driver, HttpDriver):  # the header must agree with `_meta`
        driver.version = asked
    answer = driver.request("tools/list", params)
    assert answer is not None and error_code(answer) == UNSUPPORTED_PROTOCOL_VERSION, answer
    assert answer["error"]["data"]["supported"] == list(versions.SUPPORTED_VERSIONS)


# --- batches: 2025-03-26 only ------------------------------------------------------------------------

@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
def test_batches_are_served_only_where_the_version_has_them(streamed: Target, version: str,
                                                            speakers: list[Speaker]) -> None:
    speaker = speak(speakers, streamed, version)
    driver = speaker.driver
    batch = [{"jsonrpc": "2.0", "id": 901, "method": "ping"}, {"jsonrpc": "2.0", "id": 902, "method": "tools/list"}]
    driver.send(batch)
    reply = driver.receive(10)
    if versions.features(version).batching:
        assert isinstance(reply, list) and sorted(m["id"] for m in reply) == [901, 902], reply
        speaker.check(reply)
    else:
        assert isinstance(reply, dict) and reply["id"] is None and error_code(reply) == INVALID_REQUEST, reply
        speaker.check(reply)
    assert "result" in speaker.call("ping")[0]  # the connection goes on


# --- notifications ------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", versions.SUPPORTED_VERSIONS)
def test_a_cancelled_request_stops_and_is_not_answered(one_connection: Target, version: str,
                                                       speakers: list[Speaker]) -> None:
    speaker = speak(speakers, one_connection, version)
    request_id = speaker.send("tools/call", SLOW)
    time.sleep(0.2)
    speaker.driver.notify("notifications/cancelled", {"requestId": request_id, "reason": "audit"})
    answers, others = speaker.driver.drain(2.0)
    assert key(request_id) not in answers, f"{version}: the cancelled call was answered: {answers}"
    for message in others:
        speaker.check(message)
    assert "result" in speaker.call("tools/list", {})[0]  # and the connection goes on


@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
def test_list_changes_reach_handshake_sessions(one_connection: Target, version: str,
                                               speakers: list[Speaker]) -> None:
    speaker = speak(speakers, one_connection, version)
    answer, notifications = speaker.call("tools/call", {"name": "touch", "arguments": {}})
    assert "result" in answer
    if not [m for m in notifications if m.get("method") == "notifications/tools/list_changed"]:
        _, more = speaker.driver.drain(0.5)
        for message in more:
            speaker.check(message)
        notifications += more
    assert [m for m in notifications if m.get("method") == "notifications/tools/list_changed"], notifications


def test_list_changes_reach_stateless_listeners_and_cancelling_ends_the_listen(one_connection: Target,
                                                                               speakers: list[Speaker]) -> None:
    """2026-07-28 has no session to notify: a `subscriptions/listen` request is the channel, on every
    transport, and the client ends it with `notifications/cancelled` (which names no version)."""
    speaker = speak(speakers, one_connection, MODERN)
    listen_id = speaker.send("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    acknowledged = speaker.driver.receive(5)
    assert acknowledged is not None and acknowledged["method"] == "notifications/subscriptions/acknowledged"
    speaker.check(acknowledged)
    answer, notifications = speaker.call("tools/call", {"name": "touch", "arguments": {}})
    assert "result" in answer
    changed = [m for m in notifications if m.get("method") == "notifications/tools/list_changed"]
    if not changed:
        _, more = speaker.driver.drain(0.5)
        changed = [m for m in more if m.get("method") == "notifications/tools/list_changed"]
    assert changed and changed[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen_id
    speaker.driver.notify("notifications/cancelled", {"requestId": listen_id})
    answers, others = speaker.driver.drain(0.5)
    for message in [*(m for ms in answers.values() for m in ms), *others]:
        speaker.check(message, "subscriptions/listen")
    _, after = speaker.call("tools/call", {"name": "touch", "arguments": {}})
    after += speaker.driver.drain(0.3)[1]
    assert not [m for m in after if m.get("method") == "notifications/tools/list_changed"], \
        "the cancelled listen still delivers"


# --- the MCP-Protocol-Version header (Streamable HTTP) --------------------------------------------------

@pytest.fixture(scope="module")
def http_url(servers: HexmcpServers) -> str:
    driver = servers.target("http").connect()
    driver.close()
    return driver.url  # type: ignore[attr-defined]


HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
ADD = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}


@pytest.fixture
def session(http_url: str) -> Iterator[tuple[httpx.Client, Any]]:
    with httpx.Client(headers=HEADERS, timeout=10) as http:
        opened: list[str] = []

        def initialize(version: str) -> str:
            response = http.post(http_url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                           "params": initialize_params(version)})
            assert response.json()["result"]["protocolVersion"] == version
            session_id = response.headers["mcp-session-id"]
            opened.append(session_id)
            http.post(http_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                      headers={"mcp-session-id": session_id, "mcp-protocol-version": version})
            return session_id

        yield http, http_url, initialize
        for session_id in opened:
            http.delete(http_url, headers={"mcp-session-id": session_id})


@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
def test_a_session_is_served_at_its_negotiated_version_whatever_supported_header_comes(session, version: str) -> None:
    """No header: the negotiated version (the spec's 2025-03-26 default is for when nothing else tells it).
    A header naming another supported version: still the negotiated one, as the official SDKs do; the
    spec asks 400 only for an invalid or unsupported value."""
    http, url, initialize = session
    session_id = initialize(version)
    other = versions.V2024_11_05 if version != versions.V2024_11_05 else versions.V2025_11_25
    for header in ({}, {"mcp-protocol-version": other}):
        response = http.post(url, json=ADD, headers={"mcp-session-id": session_id, **header})
        result = response.json()["result"]
        schemas.validate_result(version, "tools/call", result)
        schemas.validate_result_members(version, "tools/call", result)
        assert ("structuredContent" in result) == versions.features(version).structured_output


@pytest.mark.parametrize("value", ["2099-01-01", "2000-01-01", "invalid-protocol-version", "2024-10-07"])
@pytest.mark.parametrize("with_session", [False, True])
def test_an_unsupported_version_header_is_400(session, value: str, with_session: bool) -> None:
    http, url, initialize = session
    headers = {"mcp-protocol-version": value}
    if with_session:
        headers["mcp-session-id"] = initialize(versions.LATEST_HANDSHAKE_VERSION)
    response = http.post(url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
