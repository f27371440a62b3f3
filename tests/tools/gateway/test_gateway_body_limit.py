"""The answer's size limit holds whichever way the body is read (issue 31 reads a plain body with a
declared length in one call): a compressed body is counted as it decodes, so a small declared length
cannot carry an answer past max_response_bytes."""

from __future__ import annotations

import asyncio
import gzip

import orjson
import uvicorn

from hexmcp.tools.gateway.outbound import GatewayConfig, RetryPolicy
from hexmcp.tools.gateway.outbound.openai_compatible import OpenAICompatibleGateway
from hexmcp.tools.gateway.port import ChatAnswer, ChatMessage, ChatRequest, GatewayErrorKind, GatewayFailure
from tests.support.net import free_port, uvicorn_in_thread

REQUEST = ChatRequest(model="m", messages=(ChatMessage(role="user", content="hi"),))
PLAIN = orjson.dumps({"model": "m", "choices": [{"message": {"role": "assistant", "content": "ok"},
                                                 "finish_reason": "stop"}]})
BOMB = gzip.compress(orjson.dumps({"model": "m", "choices": [{"message": {"role": "assistant",
                                                                          "content": "x" * 200_000}}]}))


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    compressed = scope["path"].endswith("/gzip/chat/completions")
    body = BOMB if compressed else PLAIN
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if compressed:
        headers.append((b"content-encoding", b"gzip"))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _complete(url: str):
    async def run():
        gateway = OpenAICompatibleGateway(GatewayConfig(url=url, max_response_bytes=10_000,
                                                        retries=RetryPolicy(max_retries=0)))
        try:
            return await gateway.complete(REQUEST)
        finally:
            await gateway.aclose()
    return asyncio.run(run())


def test_a_small_compressed_body_that_decodes_past_the_limit_is_refused_and_a_plain_one_answers():
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    with uvicorn_in_thread(server, what="gzip gateway"):
        assert len(BOMB) < 10_000
        refused = _complete(f"http://127.0.0.1:{port}/gzip")
        plain = _complete(f"http://127.0.0.1:{port}/v1")
    assert isinstance(refused, GatewayFailure) and refused.kind is GatewayErrorKind.PROVIDER_UNAVAILABLE
    assert "10000-byte limit" in refused.message
    assert isinstance(plain, ChatAnswer) and plain.text == "ok"
