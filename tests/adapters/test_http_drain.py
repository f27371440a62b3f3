"""Graceful drain of a real `hexmcp serve` process: SIGTERM with work in flight on every kind of connection.

The slow request is the demo server's `slow` tool mounted as an upstream (`demo__slow`), so what is in
flight is a real tool call: over the official SDK's Streamable HTTP client and over a WebSocket.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import signal
import socket
import time

import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from websockets.exceptions import ConnectionClosed

from hexmcp.adapters.http.status import http_status
from hexmcp.adapters.ws.dialect import CloseCode
from hexmcp.core import ErrorCode

from ..fixtures.ws_live import ChatGptClient
from ..support.serve_process import DEMO_UPSTREAM, LIGHT, serve_process

SLOW_S = 3.0
QUEUED = 20


def _get_health(connection: http.client.HTTPConnection) -> tuple[int, dict]:
    connection.request("GET", "/health")
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def _until_draining(connection: http.client.HTTPConnection) -> tuple[int, dict]:
    deadline = time.monotonic() + 10
    while True:
        status, body = _get_health(connection)
        if status != 200 or time.monotonic() > deadline:
            return status, body
        time.sleep(0.02)


@pytest.mark.timeout(120)
def test_sigterm_drains_in_flight_work_refuses_new_connections_and_exits_0() -> None:
    with serve_process(*LIGHT, "--upstream", DEMO_UPSTREAM, "--drain-timeout", "30") as served:
        served.wait_for_tool("demo__slow")
        # A kept-alive connection opened before the signal: the only way to ask /health once the
        # listener is closed (a balancer's pooled connection is in the same position).
        kept = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
        assert _get_health(kept)[0] == 200

        async def scenario() -> None:
            sdk_started = asyncio.Event()

            async def on_progress(value, total, message) -> None:
                sdk_started.set()

            async def sdk_call():
                async with streamable_http_client(f"{served.base}/mcp") as streams:
                    async with ClientSession(streams[0], streams[1]) as session:
                        await session.initialize()
                        await session.list_tools()  # else call_tool lists them after the answer, on a new connection
                        return await session.call_tool("demo__slow", {"seconds": SLOW_S, "steps": 30},
                                                       progress_callback=on_progress)

            sdk = asyncio.ensure_future(sdk_call())
            async with ChatGptClient.connect(f"ws://127.0.0.1:{served.port}/ws") as ws:
                await ws.initialize()
                slow_id = ws.next_id()
                await ws.send({"id": slow_id, "method": "tools/call", "params": {
                    "name": "demo__slow", "arguments": {"seconds": SLOW_S, "steps": 30}, "_meta": {"progressToken": "p"}}})
                assert (await ws.recv(timeout=20))["method"] == "notifications/progress"  # in flight
                await asyncio.wait_for(sdk_started.wait(), 20)

                served.process.send_signal(signal.SIGTERM)
                status, body = await asyncio.to_thread(_until_draining, kept)
                assert (status, body["status"]) == (503, "draining")
                # A later request on a kept-alive connection is refused (the client retries elsewhere);
                # only a connection's first request, sent before the listener closed, is still served.
                kept.request("POST", "/mcp/tools/list", body=b"{}", headers={"content-type": "application/json"})
                refused = kept.getresponse()
                assert refused.status == http_status(ErrorCode.SERVER_BUSY) and refused.getheader("retry-after")
                refused.read()
                with pytest.raises(ConnectionRefusedError):
                    socket.create_connection(("127.0.0.1", served.port), timeout=5).close()

                answers = {}
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        message = await ws.recv(timeout=30)
                        answers[message.get("id")] = message
                assert answers[slow_id]["result"]["content"][0]["text"] == f"slept {SLOW_S}"
                assert closed.value.rcvd is not None and closed.value.rcvd.code == CloseCode.GOING_AWAY
            result = await asyncio.wait_for(sdk, 30)
            assert not result.is_error and result.content[0].text == f"slept {SLOW_S}"

        asyncio.run(scenario())
        kept.close()
        assert served.process.wait(timeout=30) == 0


@pytest.mark.timeout(90)
def test_the_drain_deadline_cuts_what_outlives_it_with_an_answer_naming_the_drain_and_exits_0(tmp_path) -> None:
    """A call still running at the drain deadline is answered 503 / -32005 naming the drain, on the REST
    dialect and on JSON-RPC, with no traceback in the log (it was uvicorn's bare 500 for a cancelled response
    and "Exception in ASGI application")."""
    log = tmp_path / "serve.log"
    with open(log, "wb") as stderr, serve_process(*LIGHT, "--upstream", DEMO_UPSTREAM, "--drain-timeout", "1",
                                                  stderr=stderr) as served:
        served.wait_for_tool("demo__slow")
        arguments = {"name": "demo__slow", "arguments": {"seconds": 60, "steps": 60}}
        rest = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
        rest.request("POST", "/mcp/tools/call", body=json.dumps(arguments), headers={"content-type": "application/json"})
        rpc = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
        rpc.request("POST", "/mcp", body=json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                                     "params": arguments}),
                    headers={"content-type": "application/json", "accept": "application/json, text/event-stream",
                             "mcp-protocol-version": "2025-06-18"})
        time.sleep(1.0)  # the calls have reached the upstream by now (its 60 steps report every second)
        started = time.monotonic()
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=30) == 0
        # Bounded by the deadline (1 s) plus uvicorn's floor and the interpreter's exit, not by the 60 s call.
        assert time.monotonic() - started < 20
        answered = rest.getresponse()
        assert answered.status == 503
        assert "the drain deadline (1 s) passed" in answered.read().decode()
        answered = rpc.getresponse()
        body = answered.read().decode()
        assert answered.status == 200, (answered.status, body)  # a served request's answer, as a -32001 timeout's
        error = json.loads(body)
        assert error["id"] == 7 and error["error"]["code"] == -32005, error
        assert "the drain deadline (1 s) passed: tools/call" in error["error"]["message"], error
    text = log.read_text()
    assert "Traceback" not in text and "Exception in ASGI application" not in text, text[-2000:]
    cut = [json.loads(line) for line in text.splitlines() if "cutting them" in line]
    assert len(cut) == 1 and cut[0]["inFlight"] == 2, cut


@pytest.mark.timeout(90)
def test_requests_already_queued_when_the_listener_closes_are_served() -> None:
    # Stopped, the server cannot accept: the kernel completes the connections and queues them, with
    # their requests. Then SIGTERM and SIGCONT: the listener closes, and what was queued is served.
    with serve_process(*LIGHT) as served:
        os.kill(served.process.pid, signal.SIGSTOP)
        try:
            queued = []
            for _ in range(QUEUED):
                connection = socket.create_connection(("127.0.0.1", served.port), timeout=30)
                connection.sendall(b"POST /mcp/tools/list HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                   b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
                queued.append(connection)
            served.process.send_signal(signal.SIGTERM)
        finally:
            os.kill(served.process.pid, signal.SIGCONT)
        heads = []
        for connection in queued:
            heads.append(connection.recv(64).split(b"\r\n", 1)[0])
            connection.close()
        assert heads == [b"HTTP/1.1 200 OK"] * QUEUED
        assert served.process.wait(timeout=30) == 0
