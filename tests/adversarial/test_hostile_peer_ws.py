"""A client that answers the server's own requests badly, over WebSocket, in both dialects (ChatGPT's
without `jsonrpc`, and the `mcp` subprotocol's strict JSON-RPC). A real server (uvicorn in a thread)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import connect

from hexmcp.adapters.ws import WsConfig
from tests.fixtures.asking_server import build_asking_server
from tests.fixtures.ws_live import PROTOCOL_VERSION, live_ws

DIALECTS = [pytest.param(None, id="chatgpt"), pytest.param(["mcp"], id="mcp")]


@pytest.fixture(scope="module")
def live():
    with live_ws(build_asking_server(), WsConfig(client_request_timeout_s=1)) as server:
        yield server


class Peer:
    def __init__(self, ws: Any, strict: bool) -> None:
        self.ws = ws
        self.strict = strict

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps({"jsonrpc": "2.0", **message} if self.strict else message))

    async def recv(self, timeout_s: float = 10.0) -> dict[str, Any]:
        return json.loads(await asyncio.wait_for(self.ws.recv(), timeout_s))

    async def initialize(self) -> None:
        await self.send({"id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION, "capabilities": {"elicitation": {}, "sampling": {}},
            "clientInfo": {"name": "hostile-peer", "version": "1"}}})
        assert "result" in await self.recv()
        await self.send({"method": "notifications/initialized"})

    async def ask(self, tool: str) -> dict[str, Any]:
        await self.send({"id": 1, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
        return await self.recv()


def _run(live: Any, subprotocols: list[str] | None, scenario: Any) -> Any:
    async def main() -> Any:
        async with connect(live.url, subprotocols=subprotocols) as ws:
            peer = Peer(ws, strict=subprotocols is not None)
            await peer.initialize()
            return await scenario(peer)
    return asyncio.run(main())


@pytest.mark.parametrize("subprotocols", DIALECTS)
def test_an_answer_of_the_wrong_shape_ends_the_call_with_what_is_wrong(live, subprotocols) -> None:
    async def scenario(peer: Peer) -> None:
        question = await peer.ask("sample_once")
        await peer.send({"id": question["id"], "result": {"role": "assistant", "model": "m"}})
        answer = await peer.recv()
        assert answer["id"] == 1 and "sampling/createMessage is not valid: content is missing" in (
            answer["result"]["content"][0]["text"])
    _run(live, subprotocols, scenario)


@pytest.mark.parametrize("subprotocols", DIALECTS)
def test_no_answer_ends_the_call_at_the_deadline_and_the_socket_serves_on(live, subprotocols) -> None:
    async def scenario(peer: Peer) -> None:
        question = await peer.ask("ask_name")
        answer = await peer.recv()
        assert "no answer to elicitation/create within 1 s" in answer["result"]["content"][0]["text"]
        await peer.send({"id": question["id"], "result": {"action": "decline"}})  # late: dropped
        await peer.send({"id": 2, "method": "ping"})
        assert (await peer.recv())["id"] == 2
    _run(live, subprotocols, scenario)


def test_a_client_leaving_mid_question_does_not_touch_another(live) -> None:
    async def leave(peer: Peer) -> None:
        await peer.ask("ask_name")  # and the socket closes with the question open

    async def stay(peer: Peer) -> None:
        question = await peer.ask("ask_name")
        await peer.send({"id": question["id"], "result": {"action": "accept", "content": {"name": "Ada"}}})
        assert (await peer.recv())["result"]["content"][0]["text"] == "Hello, Ada!"

    _run(live, None, leave)
    _run(live, ["mcp"], stay)
