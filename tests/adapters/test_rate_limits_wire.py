"""Rate limits through every transport of a real `hexmcp serve` / `hexmcp stdio`: a flooding client is
refused (HTTP 429 + Retry-After; JSON-RPC -32002 with retryAfterSeconds) while another client is served,
and a tool's own limit applies instead of the default one."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from hexmcp.wire import jsonrpc
from hexmcp.adapters.http import STATUS
from hexmcp.adapters.retry_hint import RETRY_AFTER_KEY
from hexmcp.core import ErrorCode

from ..fixtures.ws_live import ChatGptClient
from ..support.wire import StdioServer
from .guard_servers import CHEAP_TOOL, OTHER_TOOL, serve, stdio_command
from .http_wire import Wire

pytestmark = pytest.mark.timeout(90)

RATE_LIMITED = jsonrpc.ERROR_CODES[ErrorCode.RATE_LIMITED]
TOO_MANY = STATUS[ErrorCode.RATE_LIMITED].http
RATE, BURST = 2, 5  # the default budget: requests a second, and at once
FLOOD = 40  # far beyond BURST + RATE * (the seconds a flood takes)


@pytest.fixture(scope="module")
def base():
    with serve("--rate-limit", f"{RATE}/s", "--rate-burst", str(BURST),
               "--tool-rate-limit", f"{CHEAP_TOOL}=1000/s:1000") as url:
        yield url


# A client is its address (no authentication is configured; a bearer value would not name it): each client
# of these tests connects from an address of its own on the loopback network.
CLIENTS = {name: f"127.0.0.{n}" for n, name in enumerate(
    ["rest-flooder", "rest-other", "per-tool", "session-flooder", "sdk-client", "sdk-over-budget", "modern-flooder",
     "ws-flooder"], start=11)}


def _from(name: str) -> httpx.HTTPTransport:
    return httpx.HTTPTransport(local_address=CLIENTS[name])


def _from_async(name: str) -> httpx2.AsyncHTTPTransport:
    return httpx2.AsyncHTTPTransport(local_address=CLIENTS[name])


def _wire(base: str, name: str) -> Wire:
    wire = Wire(base)
    wire.http.close()
    wire.http = httpx.Client(base_url=base, timeout=10, transport=_from(name))
    return wire


def _call(tool: str) -> dict:
    return {"name": tool, "arguments": {}}


def _flood(send, count: int = FLOOD) -> list[httpx.Response]:
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda _: send(), range(count)))


def _assert_refusals(responses: list[httpx.Response]) -> list[httpx.Response]:
    refused = [r for r in responses if r.status_code == TOO_MANY]
    assert refused, [r.status_code for r in responses]
    for response in refused:
        assert int(response.headers["retry-after"]) >= 1
    return refused


def test_rest_flood_is_refused_with_retry_after_while_another_client_is_served(base: str) -> None:
    with httpx.Client(base_url=base, timeout=30, transport=_from("rest-flooder")) as flooder, \
            httpx.Client(base_url=base, timeout=30, transport=_from("rest-other")) as other:
        def flood_one() -> httpx.Response:
            return flooder.post("/mcp/tools/call", json=_call(OTHER_TOOL))

        with ThreadPoolExecutor(1) as side:
            # The other client calls while the flood is on: its own bucket is untouched by it.
            others = side.submit(lambda: [other.post("/mcp/tools/list")
                                          for _ in range(BURST - 1)])
            responses = _flood(flood_one)
            served = others.result()
    refused = _assert_refusals(responses)
    admitted = [r for r in responses if r.status_code != TOO_MANY]
    assert 1 <= len(admitted) < FLOOD
    body = refused[0].json()
    assert body["code"] == RATE_LIMITED and body["error"] == ErrorCode.RATE_LIMITED.value
    assert body["data"][RETRY_AFTER_KEY] > 0 and body["eventId"]
    assert [r.status_code for r in served] == [200] * (BURST - 1)


def test_a_tools_own_limit_applies_instead_of_the_default(base: str) -> None:
    with httpx.Client(base_url=base, timeout=30, transport=_from("per-tool")) as client:
        exhausted = _flood(lambda: client.post("/mcp/tools/call", json=_call(OTHER_TOOL)))
        _assert_refusals(exhausted)
        # The same client, out of default budget, still calls the cheap tool: it has a budget of its own.
        cheap = [client.post("/mcp/tools/call", json=_call(CHEAP_TOOL)) for _ in range(20)]
        assert [r.status_code for r in cheap] == [200] * 20
        again = client.post("/mcp/tools/call", json=_call(OTHER_TOOL))
        assert again.status_code == TOO_MANY


def test_handshake_era_flood_gets_429_while_the_sdk_client_is_served(base: str) -> None:
    wire = _wire(base, "session-flooder")
    try:
        wire.initialize()

        async def sdk_client() -> list[str]:
            async with httpx2.AsyncClient(transport=_from_async("sdk-client"), timeout=30) as http:
                async with streamable_http_client(base + "/mcp", http_client=http) as streams:
                    async with ClientSession(streams[0], streams[1]) as session:
                        await session.initialize()
                        names = [tool.name for tool in (await session.list_tools()).tools]
                        result = await session.call_tool(CHEAP_TOOL, {})
                        return [*names, str(result.is_error)]

        with ThreadPoolExecutor(1) as side:
            seen = side.submit(asyncio.run, sdk_client())
            responses = _flood(lambda: wire.post({"jsonrpc": "2.0", "id": wire.next_id(), "method": "tools/call",
                                                  "params": _call(OTHER_TOOL)}))
            assert CHEAP_TOOL in seen.result()
    finally:
        wire.close()
    refused = _assert_refusals(responses)
    error = refused[0].json()["error"]
    assert error["code"] == RATE_LIMITED and error["data"][RETRY_AFTER_KEY] > 0


def test_the_sdk_client_reads_the_429_as_minus_32002_and_its_session_survives(base: str) -> None:
    async def scenario() -> tuple[list[int], float]:
        async with httpx2.AsyncClient(transport=_from_async("sdk-over-budget"), timeout=30) as http:
            async with streamable_http_client(base + "/mcp", http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    codes: list[int] = []
                    wait = 0.0
                    for _ in range(BURST + 3):
                        try:
                            await session.list_tools()
                            codes.append(0)
                        except MCPError as error:
                            codes.append(error.code)
                            wait = error.data[RETRY_AFTER_KEY]
                    await asyncio.sleep(wait)
                    await session.list_tools()  # the same session, once the hint has passed
                    return codes, wait

    codes, wait = asyncio.run(scenario())
    assert RATE_LIMITED in codes and codes[0] == 0 and 0 < wait <= 1 / RATE


def test_stateless_era_flood_gets_429_with_retry_after(base: str) -> None:
    wire = _wire(base, "modern-flooder")
    try:
        responses = _flood(lambda: wire.modern("tools/call", _call(OTHER_TOOL), name=OTHER_TOOL)[0])
    finally:
        wire.close()
    refused = _assert_refusals(responses)
    assert refused[0].json()["error"]["code"] == RATE_LIMITED


@pytest.mark.anyio
async def test_websocket_flood_gets_minus_32002_with_the_hint_in_data(base: str) -> None:
    url = base.replace("http://", "ws://") + "/ws"
    async with ChatGptClient.connect(url, local_addr=(CLIENTS["ws-flooder"], 0)) as client:
        await client.initialize()
        ids = [client.next_id() for _ in range(FLOOD)]
        for request_id in ids:
            await client.send({"id": request_id, "method": "tools/call", "params": _call(OTHER_TOOL)})
        answers = [await _next_answer(client) for _ in ids]
    refused = [a for a in answers if a.get("error", {}).get("code") == RATE_LIMITED]
    assert BURST - 1 <= FLOOD - len(refused) < FLOOD  # the initialize spent one token of the burst
    assert all(a["error"]["data"][RETRY_AFTER_KEY] > 0 for a in refused)
    assert sorted(a["id"] for a in answers) == sorted(ids)


async def _next_answer(client: ChatGptClient) -> dict:
    while "id" not in (message := await client.recv()):
        pass  # a notification
    return message


def test_stdio_gets_minus_32002_for_a_tool_over_its_limit_and_other_requests_pass() -> None:
    server = StdioServer(stdio_command("--tool-rate-limit", f"{CHEAP_TOOL}=1/min:2"))
    try:
        server.initialize()
        answers = [server.request(n, "tools/call", _call(CHEAP_TOOL)) for n in range(10, 13)]
        assert ["error" in a for a in answers] == [False, False, True]
        error = answers[-1]["error"]
        assert error["code"] == RATE_LIMITED and 0 < error["data"][RETRY_AFTER_KEY] <= 60
        assert "result" in server.request(20, "tools/list")  # no default limit: only the tool's
    finally:
        server.kill()
