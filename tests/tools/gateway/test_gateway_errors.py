"""The OpenAI-compatible client against a scripted local gateway: the error map and the retry rules.

Every upstream behaviour becomes its design code (-32001..-32007) with the upstream status and the
attempts made; only 429, 408, 5xx, timeouts and broken connections are retried, and the fake server's
request count proves how often we asked.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st
from structlog.testing import capture_logs

from hexmcp.adapters.http.status import http_status, rpc_status
from hexmcp.tools.gateway.outbound import GatewayConfig, RetryPolicy
from hexmcp.tools.gateway.outbound.failures import STATUS_KINDS
from hexmcp.tools.gateway.outbound.openai_compatible import OpenAICompatibleGateway
from hexmcp.tools.gateway.port import ChatAnswer, ChatMessage, ChatRequest, GatewayErrorKind, GatewayFailure
from hexmcp.wire.jsonrpc import code_for
from tests.support.fake_gateway import FakeGateway, Script, fake_gateway
from tests.support.net import free_port

pytestmark = pytest.mark.timeout(60)

KEY = "sk-test-0123456789abcdef-SECRET"
TINY = RetryPolicy(max_retries=2, delay_s=0.001, max_delay_s=0.002, retry_after_cap_s=0.05)
REQUEST = ChatRequest(model="qwen3-32b", messages=(ChatMessage(role="user", content="What is 6 x 7?"),))


@pytest.fixture(scope="module")
def upstream():
    with fake_gateway() as gateway:
        yield gateway


@pytest.fixture(autouse=True)
def _fresh_scripts(upstream: FakeGateway):
    upstream.scripts.clear()
    yield
    upstream.scripts.clear()


def _gateway(url: str, **overrides) -> OpenAICompatibleGateway:
    settings = {"url": url, "api_key": KEY, "retries": TINY, "timeout_s": 5.0, **overrides}
    return OpenAICompatibleGateway(GatewayConfig(**settings))


def _complete(url: str, request: ChatRequest = REQUEST, on_text=None, **overrides):
    async def run():
        gateway = _gateway(url, **overrides)
        try:
            return await gateway.complete(request, on_text)
        finally:
            await gateway.aclose()
    return asyncio.run(run())


@pytest.mark.parametrize(("status", "message", "kind", "retried"), [
    (401, "Incorrect API key provided", GatewayErrorKind.AUTHENTICATION, False),
    (403, "forbidden", GatewayErrorKind.AUTHENTICATION, False),
    (404, "The model `qwen3-32b` does not exist.", GatewayErrorKind.MODEL_NOT_FOUND, False),
    (400, "Invalid model name passed in model=qwen3-32b", GatewayErrorKind.MODEL_NOT_FOUND, False),
    (400, "max_tokens is too large", GatewayErrorKind.PROVIDER_UNAVAILABLE, False),
    (408, "request timeout", GatewayErrorKind.TIMEOUT, True),
    (429, "Rate limit reached", GatewayErrorKind.RATE_LIMITED, True),
    (500, "internal error", GatewayErrorKind.PROVIDER_UNAVAILABLE, True),
    (502, "bad gateway", GatewayErrorKind.PROVIDER_UNAVAILABLE, True),
    (503, "overloaded", GatewayErrorKind.PROVIDER_UNAVAILABLE, True),
])
def test_each_status_becomes_its_code_and_only_transient_ones_are_retried(upstream, status, message, kind, retried):
    upstream.queue("chat", *[Script(status=status, body={"error": {"message": message}})] * (TINY.max_retries + 1))
    before = upstream.count("chat")
    outcome = _complete(upstream.url)
    assert isinstance(outcome, GatewayFailure)
    assert outcome.kind is kind and outcome.code == kind.value
    assert outcome.status == status
    expected_attempts = TINY.max_retries + 1 if retried else 1
    assert outcome.attempts == expected_attempts
    assert upstream.count("chat") - before == expected_attempts
    assert outcome.data() == {"code": kind.value, "kind": kind.name.lower(), "status": status,
                              "attempts": expected_attempts}


def test_the_status_table_never_retries_a_refusal():
    for status in (400, 401, 403, 404):
        assert not STATUS_KINDS.get(status, (None, False))[1]


def test_transient_failures_then_an_answer(upstream):
    upstream.queue("chat", Script(status=503), Script(status=429, headers={"retry-after": "0"}))
    outcome = _complete(upstream.url)
    assert isinstance(outcome, ChatAnswer)
    assert outcome.text == upstream.reply_text and outcome.attempts == 3
    assert outcome.usage.total_tokens == outcome.usage.prompt_tokens + outcome.usage.completion_tokens > 0


def test_retry_after_replaces_the_backoff_up_to_the_cap(upstream):
    upstream.queue("chat", Script(status=429, headers={"retry-after": "0.02"}),
                   Script(status=429, headers={"retry-after": "120"}), Script(status=429, headers={"retry-after-ms": "7"}))
    with capture_logs() as logs:
        outcome = _complete(upstream.url, retries=RetryPolicy(max_retries=2, delay_s=0.001, retry_after_cap_s=0.03))
    waits = [entry["wait_s"] for entry in logs if entry["event"] == "gateway call failed, retrying"]
    assert waits == [0.02, 0.03]  # the gateway's 0.02 s as is; its 120 s cut to the cap
    assert isinstance(outcome, GatewayFailure) and outcome.kind is GatewayErrorKind.RATE_LIMITED
    assert outcome.attempts == 3


def test_a_connection_cut_mid_body_is_a_network_error_and_retried(upstream):
    upstream.queue("chat", Script(cut_after_bytes=10), Script(cut_after_bytes=10), Script(cut_after_bytes=10))
    outcome = _complete(upstream.url)
    assert isinstance(outcome, GatewayFailure) and outcome.kind is GatewayErrorKind.NETWORK
    assert outcome.attempts == 3 and outcome.status is None


def test_a_refused_connection_is_a_network_error():
    outcome = _complete(f"http://127.0.0.1:{free_port()}/v1")
    assert isinstance(outcome, GatewayFailure) and outcome.kind is GatewayErrorKind.NETWORK
    assert outcome.attempts == TINY.max_retries + 1


def test_latency_beyond_the_timeout_is_a_timeout(upstream):
    upstream.queue("chat", *[Script(delay_s=1.0)] * 3)
    outcome = _complete(upstream.url, timeout_s=0.1)
    assert isinstance(outcome, GatewayFailure) and outcome.kind is GatewayErrorKind.TIMEOUT
    assert outcome.attempts == 3


def test_a_slow_body_is_cut_by_the_whole_answer_deadline(upstream):
    # Every byte arrives well within the read timeout; the whole body does not arrive within TIMEOUT.
    upstream.queue("chat", *[Script(slow_body_pause_s=0.01)] * 3)
    outcome = _complete(upstream.url, timeout_s=0.3)
    assert isinstance(outcome, GatewayFailure) and outcome.kind is GatewayErrorKind.TIMEOUT


def test_an_oversize_body_is_refused_and_not_retried(upstream):
    upstream.queue("chat", Script(oversize_bytes=50_000))
    before = upstream.count("chat")
    outcome = _complete(upstream.url, max_response_bytes=10_000)
    assert isinstance(outcome, GatewayFailure) and outcome.kind is GatewayErrorKind.PROVIDER_UNAVAILABLE
    assert "10000-byte limit" in outcome.message and outcome.attempts == 1
    assert upstream.count("chat") - before == 1


def test_an_answer_that_is_not_a_chat_completion_is_unusable(upstream):
    upstream.queue("chat", Script(body={"unexpected": True}))
    outcome = _complete(upstream.url)
    assert isinstance(outcome, GatewayFailure) and outcome.kind is GatewayErrorKind.PROVIDER_UNAVAILABLE


def test_the_key_is_sent_but_never_echoed_into_an_error(upstream):
    upstream.queue("chat", Script(status=401, body={"error": {"message": f"Incorrect API key provided: {KEY}"}}))
    with capture_logs() as logs:
        outcome = _complete(upstream.url)
    assert upstream.headers_seen()[-1]["authorization"] == f"Bearer {KEY}"
    assert upstream.headers_seen()[-1]["content-type"] == "application/json"  # set by the payload, not per call
    assert isinstance(outcome, GatewayFailure) and KEY not in outcome.message and "***" in outcome.message
    assert KEY not in repr(logs)
    assert KEY not in repr(GatewayConfig(url=upstream.url, api_key=KEY))


def test_streaming_hands_over_each_piece_and_reads_usage_from_the_last_chunk(upstream):
    upstream.queue("chat", Script(stream=("Forty", "two", "it", "is.")))
    pieces: list[str] = []

    async def on_text(piece: str) -> None:
        pieces.append(piece)

    outcome = _complete(upstream.url, on_text=on_text)
    assert isinstance(outcome, ChatAnswer)
    assert pieces == ["Forty", " two", " it", " is."] and outcome.text == "Forty two it is."
    assert outcome.usage.completion_tokens == 4 and outcome.finish_reason == "stop"
    assert upstream.bodies()[-1]["stream"] is True


def test_a_stream_cut_before_any_text_is_retried_but_not_after(upstream):
    upstream.queue("chat", Script(stream=("a", "b"), stream_cut_after=0), Script(stream=("late",)))
    pieces: list[str] = []

    async def on_text(piece: str) -> None:
        pieces.append(piece)

    first = _complete(upstream.url, on_text=on_text)
    assert isinstance(first, ChatAnswer) and first.attempts == 2 and pieces == ["late"]
    upstream.queue("chat", Script(stream=("a", "b", "c"), stream_cut_after=2), Script(stream=("never",)))
    pieces.clear()
    second = _complete(upstream.url, on_text=on_text)
    assert isinstance(second, GatewayFailure) and second.kind is GatewayErrorKind.NETWORK
    assert second.attempts == 1 and pieces == ["a", " b"]  # no second attempt repeating "a b"


def test_cancelling_the_call_aborts_the_upstream_request(upstream):
    upstream.queue("chat", Script(hang=True))

    async def run() -> None:
        gateway = _gateway(upstream.url)
        before = upstream.count("chat")
        task = asyncio.ensure_future(gateway.complete(REQUEST))
        while upstream.count("chat") == before:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        while not upstream.disconnects:
            await asyncio.sleep(0.01)
        await gateway.aclose()

    upstream.disconnects.clear()
    asyncio.run(run())
    assert upstream.disconnects == ["/v1/chat/completions"]


def test_models_list_and_its_failures(upstream):
    async def run():
        gateway = _gateway(upstream.url)
        try:
            listed = await gateway.list_models()
            upstream.queue("models", Script(status=401))
            refused = await gateway.list_models()
            return listed, refused
        finally:
            await gateway.aclose()

    listed, refused = asyncio.run(run())
    assert [m.id for m in listed] == upstream.models
    assert isinstance(refused, GatewayFailure) and refused.kind is GatewayErrorKind.AUTHENTICATION


def test_connections_are_kept_alive_between_calls(upstream):
    async def run() -> None:
        gateway = _gateway(upstream.url)
        try:
            for _ in range(5):
                assert isinstance(await gateway.complete(REQUEST), ChatAnswer)
        finally:
            await gateway.aclose()

    before = len(upstream.client_ports)  # the upstream is shared by this module's tests
    asyncio.run(run())
    ports = upstream.client_ports[before:]
    assert len(ports) == 5 and len(set(ports)) == 1  # five calls, one connection


def test_an_answer_read_to_its_end_hands_the_connection_back_and_one_left_unread_closes_it(upstream):
    """The response is released in `finally` (ADR 1209): whatever an answer said, once it was read to its
    end the connection serves the next call; an answer refused before its end closes it."""
    async def run() -> list[object]:
        gateway = _gateway(upstream.url, max_response_bytes=10_000)
        try:
            upstream.queue("chat", Script(), Script(status=401), Script(body={"unexpected": True}))
            outcomes: list[object] = [await gateway.complete(REQUEST), await gateway.list_models(),
                                      await gateway.complete(REQUEST), await gateway.complete(REQUEST)]
            upstream.queue("chat", Script(oversize_bytes=2_000_000), Script())
            outcomes += [await gateway.complete(REQUEST), await gateway.complete(REQUEST)]
            return outcomes
        finally:
            await gateway.aclose()

    before = len(upstream.client_ports)
    answered, listed, refused, unusable, oversize, after = asyncio.run(run())
    assert isinstance(answered, ChatAnswer) and isinstance(listed, tuple) and isinstance(after, ChatAnswer)
    assert [o.kind for o in (refused, unusable, oversize)] == [GatewayErrorKind.AUTHENTICATION,
                                                               GatewayErrorKind.PROVIDER_UNAVAILABLE,
                                                               GatewayErrorKind.PROVIDER_UNAVAILABLE]
    ports = upstream.client_ports[before:]
    assert len(ports) == 6
    assert len(set(ports[:5])) == 1  # read to their end: one connection, the oversize answer's request included
    assert ports[5] != ports[4]  # the oversize answer, refused at its declared length, was left unread: closed


@given(retry=st.integers(min_value=1, max_value=12), delay=st.floats(min_value=0, max_value=10),
       backoff=st.sampled_from(["linear", "exponential"]), jitter=st.floats(min_value=0, max_value=1),
       retry_after=st.one_of(st.none(), st.floats(min_value=0, max_value=1e6)))
def test_waits_stay_within_the_policy(retry, delay, backoff, jitter, retry_after):
    policy = RetryPolicy(delay_s=delay, backoff=backoff, jitter=jitter, max_delay_s=30.0, retry_after_cap_s=20.0)
    wait = policy.wait_before(retry, retry_after)
    if retry_after is not None:
        assert wait == min(retry_after, 20.0)
    else:
        base = min(delay * (retry if backoff == "linear" else 2 ** (retry - 1)), 30.0)
        assert base * (1 - jitter) - 1e-9 <= wait <= base + 1e-9


def test_the_gateway_codes_keep_their_wire_forms() -> None:
    """The pack's own codes (a models/list rejection): the design's JSON-RPC code, 200 as a JSON-RPC error
    over HTTP, a gateway's status on REST, and the name logs and the audit trail show."""
    forms = {kind.name: (code_for(kind.error_code), rpc_status(kind.error_code), http_status(kind.error_code),
                         kind.error_code.value) for kind in GatewayErrorKind}
    assert forms == {
        "AUTHENTICATION": (-32001, 200, 502, "gateway_authentication"),
        "RATE_LIMITED": (-32002, 200, 429, "gateway_rate_limited"),
        "MODEL_NOT_FOUND": (-32003, 200, 404, "gateway_model_not_found"),
        "PROVIDER_UNAVAILABLE": (-32004, 200, 502, "gateway_unavailable"),
        "CONFIGURATION": (-32005, 200, 503, "gateway_not_configured"),
        "NETWORK": (-32006, 200, 502, "gateway_network"),
        "TIMEOUT": (-32007, 200, 504, "gateway_timeout"),
    }
