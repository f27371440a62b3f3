"""A 5,000-digit integer id is valid JSON: every transport answers -32600 with id null ("integer out of
range"), not -32700; the same number in the params is -32602 naming its place, with the request's id.
Real servers: `hexmcp stdio`, and `hexmcp serve` on /mcp (sessionless and in a session), its REST dialect
and its WebSocket (`wire/json_numbers.py`; before it, each answered -32700 Parse error)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any, Iterator

import httpx
import pytest

from ..support.peer import initialize_params
from ..support.serve_process import LIGHT, ServeProcess, serve_process

pytestmark = pytest.mark.timeout(120)

HUGE = b"9" * 5000
ID = b'{"jsonrpc":"2.0","id":' + HUGE + b',"method":"ping"}'
PARAM = (b'{"jsonrpc":"2.0","id":"p7","method":"tools/call","params":{"name":"echo","arguments":{"text":"x","n":[1,'
         + HUGE + b']}}}')
PLACE = "$.params.arguments.n[1]"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def assert_refused_id(answer: Any) -> None:
    assert answer["id"] is None and answer["error"]["code"] == -32600, answer
    assert "integer out of range (5000 digits" in answer["error"]["message"], answer


def assert_refused_param(answer: Any) -> None:
    assert answer["id"] == "p7" and answer["error"]["code"] == -32602, answer
    assert PLACE in answer["error"]["message"] and answer["error"]["data"]["path"] == PLACE, answer


@pytest.fixture(scope="module")
def served() -> Iterator[ServeProcess]:
    with serve_process(*LIGHT) as server:
        yield server


def test_stdio() -> None:
    process = subprocess.Popen([sys.executable, "-m", "hexmcp.app.cli", "stdio", *LIGHT], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    init = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": initialize_params("2025-06-18")}
    lines = [json.dumps(init).encode(), b'{"jsonrpc":"2.0","method":"notifications/initialized"}', ID, PARAM,
             b'{"jsonrpc":"2.0","id":"after","method":"ping"}']
    out, _ = process.communicate(b"\n".join(lines) + b"\n", timeout=90)
    answers = {json.dumps(m.get("id")): m for m in map(json.loads, out.splitlines()) if "method" not in m}
    assert_refused_id(answers["null"])
    assert_refused_param(answers['"p7"'])
    assert answers['"after"']["result"] == {}  # the connection went on


@pytest.mark.parametrize("in_session", [False, True])
def test_http_mcp(served: ServeProcess, in_session: bool) -> None:
    with httpx.Client(base_url=served.base, headers=ACCEPT, timeout=30) as http:
        headers = {"mcp-protocol-version": "2025-06-18"}
        if in_session:
            opened = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                             "params": initialize_params("2025-06-18")})
            headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        refused = http.post("/mcp", content=ID, headers=headers)
        assert refused.status_code == 400
        assert_refused_id(refused.json())
        refused = http.post("/mcp", content=PARAM, headers=headers)
        assert refused.status_code == 400
        assert_refused_param(refused.json())


def test_http_rest(served: ServeProcess) -> None:
    """The REST body is the params: a number out of range in it is -32602 naming its place, a 400."""
    answer = httpx.post(f"{served.base}/mcp/tools/call", timeout=30, headers={"content-type": "application/json"},
                        content=b'{"name":"echo","arguments":{"text":"x","n":' + HUGE + b"}}")
    assert answer.status_code == 400, answer.text
    assert "$.arguments.n" in answer.text and "out of range" in answer.text and "Parse" not in answer.text


def test_websocket(served: ServeProcess) -> None:
    import websockets

    async def conversation() -> list[Any]:
        url = served.base.replace("http://", "ws://") + "/ws"
        async with websockets.connect(url, subprotocols=["mcp"], max_size=None, open_timeout=10) as ws:
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                                      "params": initialize_params("2025-06-18")}))
            await ws.recv()
            await ws.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
            answers = []
            for frame in (ID, PARAM):
                await ws.send(frame.decode())
                answers.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
            return answers

    refused_id, refused_param = asyncio.run(conversation())
    assert_refused_id(refused_id)
    assert_refused_param(refused_param)
