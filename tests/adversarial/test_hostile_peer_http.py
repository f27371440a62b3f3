"""A client that answers the server's own requests badly, over HTTP: a session's POST streams, answers on
another session, and the 2026-07-28 era's `inputResponses`. A real server (uvicorn in a thread)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any, Iterator

import httpx
import pytest

from hexmcp.wire import jsonrpc
from hexmcp.core import ErrorCode
from tests.adapters.http_live import live_server
from tests.adapters.http_wire import Wire
from tests.fixtures.asking_server import build_asking_server

CALL = {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "ask_name", "arguments": {}}}


@pytest.fixture(scope="module")
def live():
    with live_server(build_asking_server(), client_request_timeout_s=1) as server:
        yield server


def _session(live: Any) -> Wire:
    wire = Wire(live.base)
    wire.initialize(capabilities={"elicitation": {}})
    return wire


async def _call_answering(live: Any, asked: Wire, answering: Wire, result: Any) -> dict[str, Any]:
    """`asked` calls ask_name; its question is answered with `result` on `answering`'s session."""
    async with httpx.AsyncClient(base_url=live.base, timeout=10) as client:
        async with client.stream("POST", "/mcp", json=CALL, headers=asked.headers()) as response:
            async for line in response.aiter_lines():
                if not line.startswith("data:") or not line[5:].strip():
                    continue
                message = json.loads(line[5:])
                if message.get("method") == "elicitation/create":
                    reply = await client.post("/mcp", json={"jsonrpc": "2.0", "id": message["id"], "result": result},
                                              headers=answering.headers())
                    assert reply.status_code == 202
                elif message.get("id") == 11:
                    return message
    raise AssertionError("the call was never answered")


def test_an_answer_of_the_wrong_shape_ends_the_call_with_what_is_wrong(live) -> None:
    wire = _session(live)
    answer = asyncio.run(_call_answering(live, wire, wire, {"action": "accept", "content": {"name": 5}}))
    text = answer["result"]["content"][0]["text"]
    assert answer["result"]["isError"] is True and "content at $.name: 5 is not of type 'string'" in text
    wire.close()


def test_an_answer_on_another_session_is_dropped_and_the_call_ends_at_the_deadline(live) -> None:
    asked, other = _session(live), _session(live)
    answer = asyncio.run(_call_answering(live, asked, other, {"action": "accept", "content": {"name": "Eve"}}))
    assert "no answer to elicitation/create within 1 s" in answer["result"]["content"][0]["text"]
    asked.close()
    other.close()


@pytest.mark.parametrize(("answer", "expected"), [
    ({"action": "maybe"}, "action is 'maybe'"),
    ({"action": "accept", "content": {"name": 5}}, "content at $.name: 5 is not of type 'string'"),
    ({"action": "accept"}, "'name' is a required property"),
])
def test_2026_input_responses_of_the_wrong_shape_are_invalid_params(live, answer, expected) -> None:
    wire = Wire(live.base)
    caps = {"elicitation": {}}
    _response, [first] = wire.modern("tools/call", {"name": "ask_name", "arguments": {}}, name="ask_name",
                                     capabilities=caps)
    key = next(iter(first["result"]["inputRequests"]))
    retry = {"name": "ask_name", "arguments": {}, "inputResponses": {key: answer}}
    if "requestState" in first["result"]:
        retry["requestState"] = first["result"]["requestState"]
    _response, [second] = wire.modern("tools/call", retry, name="ask_name", capabilities=caps)
    assert second["error"]["code"] == jsonrpc.ERROR_CODES[ErrorCode.INVALID_PARAMS]
    assert expected in second["error"]["message"]
    wire.close()


class _Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _uvicorn_errors() -> Iterator[list[str]]:
    """What uvicorn logs as an error (an exception escaping the app, an answer never started)."""
    handler, logger = _Errors(), logging.getLogger("uvicorn.error")
    logger.addHandler(handler)
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)


def test_a_session_deleted_mid_question_ends_the_stream_quietly(live) -> None:
    async def scenario(wire: Wire) -> bool:
        async with httpx.AsyncClient(base_url=live.base, timeout=10) as client:
            async with client.stream("POST", "/mcp", json=CALL, headers=wire.headers()) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data:") and "elicitation/create" in line:
                        assert (await client.delete("/mcp", headers=wire.headers())).status_code == 200
            return True

    with _uvicorn_errors() as errors:
        wire = _session(live)
        assert asyncio.run(scenario(wire))
        wire.close()
    assert errors == []


def test_a_session_deleted_mid_call_answers_a_json_post_with_404(live) -> None:
    async def scenario(wire: Wire) -> httpx.Response:
        body = {"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "slow", "arguments": {"seconds": 2}}}
        async with httpx.AsyncClient(base_url=live.base, timeout=10) as client:
            post = asyncio.create_task(client.post("/mcp", json=body,
                                                   headers={**wire.headers(), "accept": "application/json"}))
            await asyncio.sleep(0.5)
            assert (await client.delete("/mcp", headers=wire.headers())).status_code == 200
            return await post

    with _uvicorn_errors() as errors:
        wire = _session(live)
        response = asyncio.run(scenario(wire))
        wire.close()
    assert response.status_code == 404 and response.json()["id"] == 12
    assert response.json()["error"]["code"] == jsonrpc.ERROR_CODES[ErrorCode.SESSION_NOT_FOUND]
    assert errors == []
