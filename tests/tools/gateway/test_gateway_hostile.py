"""Hostile gateways (issue 30): a redirect to another origin must not receive the API key, and a
streamed answer is bounded in raw bytes: a line that never ends is refused as it grows, and a stream
that ends before its end is an error, never a success with an empty completion.

Each hostile gateway is a small aiohttp server of its own, on a free local port; after each hostile
answer the same client makes an honest call, to show nothing else was lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Awaitable, Callable

import pytest
from aiohttp import web

from hexmcp.tools.gateway.outbound import GatewayConfig, RetryPolicy
from hexmcp.tools.gateway.outbound.openai_compatible import OpenAICompatibleGateway
from hexmcp.tools.gateway.port import ChatAnswer, ChatMessage, ChatRequest, GatewayErrorKind, GatewayFailure
from tests.support.local_aiohttp import Handler, serving

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

KEY = "sk-ant-test-0123456789-SECRET"
REQUEST = ChatRequest(model="claude-x", messages=(ChatMessage(role="user", content="What is 6 x 7?"),))
FAST = RetryPolicy(max_retries=1, delay_s=0.001, max_delay_s=0.002)
MiB = 1024 * 1024

def completion(text: str) -> dict:
    return {"model": "claude-x", "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                              "finish_reason": "stop"}], "usage": {}}


def gateway(url: str, **overrides) -> OpenAICompatibleGateway:
    return OpenAICompatibleGateway(GatewayConfig(**{"url": url, "api_key": KEY, "provider_type": "anthropic",
                                                   "retries": FAST, "timeout_s": 10.0, **overrides}))


async def test_a_redirect_to_another_origin_never_receives_the_api_key() -> None:
    """Two local servers: the gateway answers 307 to the other. The other must see no request at all
    (aiohttp drops Authorization across origins, but x-api-key was a session default and went along)."""
    seen_by_other: list[dict[str, str]] = []

    async def other(request: web.Request) -> web.Response:
        seen_by_other.append(dict(request.headers))
        return web.json_response(completion("stolen") if request.method == "POST" else {"data": []})

    async with serving({("POST", "/v1/chat/completions"): other, ("GET", "/v1/models"): other}) as elsewhere:
        honest = {"redirect": True}

        async def redirecting(request: web.Request) -> web.Response:
            if honest["redirect"]:
                raise web.HTTPTemporaryRedirect(f"{elsewhere}{request.path}?sig=abc")
            return web.json_response(completion("42") if request.method == "POST" else
                                     {"data": [{"id": "claude-x"}]})

        async with serving({("POST", "/v1/chat/completions"): redirecting,
                            ("GET", "/v1/models"): redirecting}) as base:
            client = gateway(f"{base}/v1")
            try:
                chat = await client.complete(REQUEST)
                listed = await client.list_models()
                streamed = await client.complete(REQUEST, on_text=lambda piece: asyncio.sleep(0))
                for failure in (chat, listed, streamed):
                    assert isinstance(failure, GatewayFailure), failure
                    assert failure.status == 307 and failure.attempts == 1  # a redirect is not retried
                    assert "redirect" in failure.message and f"{elsewhere}/v1/" in failure.message
                    assert "sig=abc" not in failure.message and KEY not in failure.message
                assert seen_by_other == []
                honest["redirect"] = False  # the same client still works against an honest answer
                answer = await client.complete(REQUEST)
                assert isinstance(answer, ChatAnswer) and answer.text == "42"
            finally:
                await client.aclose()


def sse_handler(body: Callable[[web.StreamResponse], Awaitable[None]]) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        await body(response)
        return response
    return handle


def chunk(text: str, finish: str | None = None) -> bytes:
    event = {"model": "claude-x", "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]}
    return f"data: {json.dumps(event)}\n\n".encode()


async def honest_stream(response: web.StreamResponse) -> None:
    await response.write(chunk("forty"))
    await response.write(chunk(" two", "stop"))
    await response.write(b"data: [DONE]\n\n")


async def test_a_line_that_never_ends_is_refused_by_raw_size_not_decoded_events() -> None:
    """24 MiB of one `data:` line without a newline against an 8 MiB cap: before, no event ever
    completed, so the decoded-event count stayed 0 and the call succeeded with an empty completion."""
    script = {"hostile": True}

    async def body(response: web.StreamResponse) -> None:
        if not script["hostile"]:
            await honest_stream(response)
            return
        await response.write(chunk("a first piece"))
        await response.write(b"data: ")
        block = b"x" * MiB
        with contextlib.suppress(ConnectionError):  # the client hangs up once the cap is passed
            for _ in range(24):
                await response.write(block)

    async with serving({("POST", "/v1/chat/completions"): sse_handler(body)}) as base:
        client = gateway(f"{base}/v1", max_response_bytes=8 * MiB)
        pieces: list[str] = []

        async def on_text(piece: str) -> None:
            pieces.append(piece)

        try:
            outcome = await client.complete(REQUEST, on_text)
            assert isinstance(outcome, GatewayFailure), outcome
            assert outcome.kind is GatewayErrorKind.PROVIDER_UNAVAILABLE
            assert f"{1 * MiB}-byte limit" in outcome.message, outcome.message
            assert pieces == ["a first piece"]
            script["hostile"] = False
            pieces.clear()
            answer = await client.complete(REQUEST, on_text)
            assert isinstance(answer, ChatAnswer) and answer.text == "forty two" and pieces == ["forty", " two"]
        finally:
            await client.aclose()


async def test_many_small_events_past_the_whole_answer_cap_are_refused() -> None:
    async def body(response: web.StreamResponse) -> None:
        with contextlib.suppress(ConnectionError):
            for _ in range(4000):  # ~4000 x 1 KiB events against a 1 MiB cap, never finishing
                await response.write(chunk("y" * 1000))

    async with serving({("POST", "/v1/chat/completions"): sse_handler(body)}) as base:
        client = gateway(f"{base}/v1", max_response_bytes=MiB)
        try:
            outcome = await client.complete(REQUEST, lambda piece: asyncio.sleep(0))
            assert isinstance(outcome, GatewayFailure) and f"{MiB}-byte limit" in outcome.message
        finally:
            await client.aclose()


async def test_a_stream_that_ends_before_its_end_is_an_error_not_an_empty_success() -> None:
    """The connection closes cleanly after a line with no newline: no [DONE], no finish_reason."""
    async def body(response: web.StreamResponse) -> None:
        await response.write(b'data: {"model": "claude-x", "choices": [{"delta": {"content": "never ends')

    async with serving({("POST", "/v1/chat/completions"): sse_handler(body)}) as base:
        client = gateway(f"{base}/v1")
        try:
            outcome = await client.complete(REQUEST, lambda piece: asyncio.sleep(0))
            assert isinstance(outcome, GatewayFailure), outcome
            assert "ended before the answer did" in outcome.message
        finally:
            await client.aclose()


async def test_a_burst_of_list_models_against_a_failing_gateway_costs_one_read() -> None:
    """100 concurrent listModels and 100 models/list (a batch runs its entries at once) against a gateway
    answering 503: before, each refreshed on its own with 4 attempts, 400 requests per 100 calls. Now one
    read (its retries included) serves them all, a failure is remembered for its backoff, and once the
    gateway is back the list is read once more and served from memory while fresh."""
    from hexmcp.core import McpServer
    from hexmcp.core.errors import Rejection
    from hexmcp.tools.gateway.mcp_tools import register_gateway_tools
    from hexmcp.tools.gateway.service import GatewaySettings
    from tests.support.fake_gateway import Script, fake_gateway
    from tests.support.peer import CoreClient

    with fake_gateway() as upstream:
        upstream.queue("models", *[Script(status=503, body={"error": {"message": "overloaded"}})] * 1000)
        server = McpServer("t", "1")
        client_gateway = OpenAICompatibleGateway(GatewayConfig(
            url=upstream.url, retries=RetryPolicy(max_retries=3, delay_s=0.01, max_delay_s=0.02)))
        tools = register_gateway_tools(server, client_gateway, None, GatewaySettings(default_model="qwen3-32b"),
                                       refresh_s=60.0)
        tools.service.failure_backoff_s = 0.5
        client = CoreClient(server)
        await client.initialize()
        try:
            calls = [client.request("tools/call", {"name": "listModels", "arguments": {}}, key=f"t{n}")
                     for n in range(100)]
            calls += [client.request("models/list", {}, key=f"m{n}") for n in range(100)]
            outcomes = await asyncio.gather(*calls)
            assert upstream.count("models") == 4  # one read: its first attempt and 3 retries
            tool_results = [outcome.result for outcome in outcomes[:100]]
            assert all(result["isError"] and "HTTP 503" in result["content"][0]["text"] for result in tool_results)
            assert all(isinstance(outcome, Rejection) and outcome.data["status"] == 503
                       and outcome.code is GatewayErrorKind.PROVIDER_UNAVAILABLE.error_code for outcome in outcomes[100:])
            # During the backoff, another burst is answered from the remembered failure: no request.
            again = await asyncio.gather(*[client.request("models/list", {}, key=f"a{n}") for n in range(50)])
            assert upstream.count("models") == 4 and all(isinstance(o, Rejection) for o in again)
            # The gateway comes back; after the backoff one read, then the list from memory.
            upstream.scripts.clear()
            await asyncio.sleep(0.6)
            listed = await asyncio.gather(*[client.session.handle_request("models/list", {}, request_key=f"b{n}",
                                                                          trace_id="t") for n in range(100)])
            assert upstream.count("models") == 5
            assert all(outcome.result["models"][0]["capabilities"]["served"] is True for outcome in listed)
            await asyncio.gather(*[client.ok("tools/call", {"name": "listModels", "arguments": {}}, key=f"c{n}")
                                   for n in range(100)])
            assert upstream.count("models") == 5
        finally:
            await client_gateway.aclose()
