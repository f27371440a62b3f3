"""CPU the event loop spends on one routed completion beyond classifying it, in process, against its floors.

    python -m bench.gateway_own_cost [--calls 300] [--rounds 7]

Starts `bench/servers/fake_openai.py` (answers at once) in its own process and, in this process on the
loop hexmcp serves on (uvloop when installed), times thread CPU per call (robust to others' load on a
shared machine, unlike wall time) of these arms, interleaved round by round:
- `routeCompletion`: `tools/call routeCompletion` through a core `Session` of a server with the gateway
  pack, its routing answered at once by a fixed decision (the classifier's work is what classify_text
  costs, which bench/gateway.py subtracts; here it is left out so that only the gateway's own part remains);
- `route tool`: `tools/call` of a tool answering the same routing decision, with the same arguments and a
  result of the same shape, but no gateway call: the tool layer's share of routeCompletion;
- `complete()`: `OpenAICompatibleGateway.complete` alone (retry loop, size-limited read, error map, parsing);
- `aiohttp`: a bare `aiohttp.ClientSession.post` of the same body, read and parsed: the HTTP client's floor;
- `raw protocol`: the same request as prebuilt bytes on one kept-alive connection, an asyncio Protocol with
  httptools' parser (what uvicorn parses with), the answer parsed: the floor of any HTTP/1.1 client on this
  loop (one socket write, one read, a parse), with none of a client's work (no pool, no headers built, no
  caps, no TLS). Not a client hexmcp could ship as it is: a measure of what aiohttp costs above that floor.
`--pause-ms N` sleeps N ms before every call (not counted), as the loop waits on the classifier before a
routed call: the upstream and the loop then start each call idle, as in `hexmcp serve` at c=1.
Prints medians over rounds (µs CPU and wall per call) and the differences: what routeCompletion adds over
the route tool (the gateway's own cost on the loop), and how much of it the bare HTTP request accounts for.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any, Awaitable, Callable

import aiohttp
import httptools
import orjson
from yarl import URL

from bench.gateway_client_cost import cost_per_call
from bench.http import free_port, start, stop
from hexmcp.core import McpServer, NullPeer
from hexmcp.core.log import configure_logging
from hexmcp.tools.gateway.mcp_tools import register_gateway_tools
from hexmcp.tools.gateway.outbound import GatewayConfig, RetryPolicy
from hexmcp.tools.gateway.outbound.openai_compatible import OpenAICompatibleGateway
from hexmcp.tools.gateway.port import ChatAnswer, ChatMessage, ChatRequest
from hexmcp.tools.gateway.routing_source import CategoryRoute, RouteChoice
from hexmcp.tools.gateway.service import GatewaySettings

PROMPT = "What is the derivative of x squared times the sine of x?"
CATEGORY = CategoryRoute(name="math", description="Mathematics", system_prompt="You are a careful mathematician.",
                         model="qwen3-32b", use_reasoning=False, reasoning_effort="medium")
REQUEST = ChatRequest(model="qwen3-32b", messages=(ChatMessage(role="system", content=CATEGORY.system_prompt),
                                                   ChatMessage(role="user", content=PROMPT)))
BODY = orjson.dumps({"model": REQUEST.model, "messages": [{"role": m.role, "content": m.content}
                                                          for m in REQUEST.messages]})


class FixedRouting:
    """A RoutingSource answering one decision at once: the classifier left out."""

    default_model = "qwen3-32b"
    fallback_model: str | None = None

    async def categories(self) -> tuple[CategoryRoute, ...]:
        return (CATEGORY,)

    async def route(self, prompt: str, client: str | None) -> RouteChoice:
        return RouteChoice(category=CATEGORY, confidence=0.93, model="qwen3-32b", use_reasoning=False)


class RawHttp(asyncio.Protocol):
    """One kept-alive HTTP/1.1 connection: a request written as prebuilt bytes, the answer's body returned
    when httptools says the message is complete. The floor arm only (no errors, caps or pool handled)."""

    def __init__(self) -> None:
        self._parser = httptools.HttpResponseParser(self)
        self._body: list[bytes] = []
        self._answer: asyncio.Future[bytes] | None = None
        self._transport: Any = None  # uvloop's transports are not asyncio.Transport subclasses

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._parser.feed_data(data)

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        assert self._answer is not None
        self._answer.set_result(b"".join(self._body))
        self._body = []

    async def post(self, request: bytes) -> bytes:
        assert self._transport is not None
        self._answer = asyncio.get_running_loop().create_future()
        self._transport.write(request)
        return await self._answer


async def raw_floor(url: str) -> tuple[Callable[[], Awaitable[None]], RawHttp]:
    """The raw-protocol arm (BODY posted to `url`'s chat completions on one kept-alive connection, the answer
    parsed), and its protocol, whose `_transport` the caller closes."""
    address = URL(url)
    _, raw = await asyncio.get_running_loop().create_connection(RawHttp, address.host, address.port)
    request = (f"POST {address.path}/chat/completions HTTP/1.1\r\nHost: {address.host}:{address.port}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(BODY)}\r\n\r\n").encode() + BODY

    async def raw_protocol() -> None:
        orjson.loads(await raw.post(request))

    return raw_protocol, raw


def _server(gateway: OpenAICompatibleGateway) -> McpServer:
    server = McpServer("bench", "1")
    register_gateway_tools(server, gateway, FixedRouting(), GatewaySettings())
    routing = FixedRouting()

    @server.tool(name="route")
    async def route(prompt: str) -> dict[str, Any]:
        """The routing decision in routeCompletion's result shape, without the gateway call."""
        choice = await routing.route(prompt, None)
        return {"completion": "The answer is 42.",
                "routing": {"category": choice.category.name, "confidence": choice.confidence, "model": choice.model,
                            "modelSource": "policy", "reasoning": choice.use_reasoning, "reasoningEffort": None},
                "model": choice.model, "finishReason": "stop",
                "usage": {"promptTokens": 12, "completionTokens": 6, "totalTokens": 18},
                "latencyMs": {"total": 0.0, "classification": 0.0, "gateway": 0.0}, "attempts": 1}

    return server


async def measure(url: str, calls: int, rounds: int, pause_s: float = 0.0) -> dict[str, tuple[float, float]]:
    gateway = OpenAICompatibleGateway(GatewayConfig(url=url, retries=RetryPolicy(max_retries=0)))
    server = _server(gateway)
    session = server.open_session(session_id="bench", peer=NullPeer(), assume_version="2025-11-25")
    client = aiohttp.ClientSession(headers={"content-type": "application/json"})
    routed = {"name": "routeCompletion", "arguments": {"prompt": PROMPT}}
    route_only = {"name": "route", "arguments": {"prompt": PROMPT}}
    key = 0

    async def tool_call(params: dict[str, Any]) -> None:
        nonlocal key
        key += 1
        result = await session.handle_request("tools/call", params, request_key=key, trace_id="t")
        assert not getattr(result, "is_error", False), result

    async def complete() -> None:
        assert isinstance(await gateway.complete(REQUEST), ChatAnswer)

    async def bare_aiohttp() -> None:
        async with client.post(url + "/chat/completions", data=BODY) as response:
            orjson.loads(await response.read())

    raw_protocol, raw = await raw_floor(url)
    arms: dict[str, Callable[[], Awaitable[None]]] = {
        "routeCompletion": lambda: tool_call(routed), "route tool": lambda: tool_call(route_only),
        "complete()": complete, "aiohttp": bare_aiohttp, "raw protocol": raw_protocol}
    try:
        per_call = await cost_per_call(arms, calls, rounds, warm=100, pause_s=pause_s)
    finally:
        await gateway.aclose()
        await client.close()
        raw._transport.close()
    return {name: (cpu * 1e6, wall * 1e6) for name, (cpu, wall) in per_call.items()}


def _run(coroutine: Any) -> Any:
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per arm and round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--pause-ms", type=float, default=0.0, help="idle before every call (not counted)")
    args = parser.parse_args(argv)
    # As `hexmcp serve` logs by default (info): a line per call at info or above would be counted.
    configure_logging("info")
    port = free_port()
    upstream = start([sys.executable, "-m", "bench.servers.fake_openai", "--port", str(port)], port)
    try:
        results: dict[str, Any] = _run(measure(f"http://127.0.0.1:{port}/v1", args.calls, args.rounds,
                                                       args.pause_ms / 1000))
    finally:
        stop(upstream)
    print(f"{'arm':<16} {'CPU µs/call':>12} {'wall µs/call':>13}")
    for name, (cpu, wall) in results.items():
        print(f"{name:<16} {cpu:>12.1f} {wall:>13.1f}")
    own = results["routeCompletion"][0] - results["route tool"][0]
    floor = results["aiohttp"][0]
    print(f"routeCompletion over the route tool (the gateway's own loop CPU): +{own:.1f} µs; the bare aiohttp "
          f"request {floor:.1f} µs of it, hexmcp's wrapper +{own - floor:.1f} µs "
          f"(complete() over aiohttp +{results['complete()'][0] - floor:.1f} µs)")
    raw_cpu, raw_wall = results["raw protocol"]
    print(f"the bare aiohttp request over the raw-protocol floor: +{floor - raw_cpu:.1f} µs CPU, "
          f"+{results['aiohttp'][1] - raw_wall:.1f} µs wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
