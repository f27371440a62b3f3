"""The audit trail of a real server over HTTP (JSON-RPC and REST) and WebSocket: every method, and every
request the HTTP app or the socket turns away before the core sees it, gets its line (issue 30: only
tools/call did, and no refusal made at the transport). Each refusal's line carries the eventId the
client was told, so the two can be matched."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosedError, InvalidStatus

from hexmcp.adapters.audit.reader import BadLine, read_trail
from hexmcp.adapters.http import HttpConfig, create_app
from hexmcp.adapters.http.runner import uvicorn_config
from hexmcp.adapters.ws import WsConfig, WsEndpoint, WsUvicornServer
from hexmcp.app.guard import install_guards
from hexmcp.core.startup import ExitCode

from ..fixtures.ws_live import ChatGptClient, ws_demo_server
from ..support.net import free_port
from ..support.wire import REPO_ROOT
from .guard_servers import HEXMCP

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

TOKEN = "audit-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SALT = b"live-audit-salt-0123456789abcdef"
MAX_BODY = 64 * 1024
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
JSON_AND_SSE = {"accept": "application/json, text/event-stream"}


class Served:
    def __init__(self, port: int, trail: Path) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.ws = f"ws://127.0.0.1:{port}/ws"
        self.trail = trail

    def lines(self) -> list[dict[str, Any]]:
        entries = list(read_trail(self.trail))
        assert not [e for e in entries if isinstance(e, BadLine)]
        return entries  # type: ignore[return-value]

    def line_of(self, event_id: str) -> dict[str, Any]:
        for _ in range(100):  # written as the request ends, which may be a moment after the answer left
            found = [line for line in self.lines() if line["eventId"] == event_id]
            if found:
                return found[0]
            time.sleep(0.02)
        raise AssertionError(f"no audit line for {event_id}")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("audit")
    trail, salt = folder / "audit.log", folder / "salt"
    salt.write_bytes(SALT)
    server = ws_demo_server()
    # As `hexmcp serve --audit-log FILE --audit-salt-file SALT` installs it.
    close = install_guards(server, argparse.Namespace(
        audit_log=str(trail), audit_redact=[], audit_max_bytes=None, audit_backups=5, audit_fsync=False,
        audit_salt_file=str(salt), rate_limit=None, rate_burst=None, tool_rate_limit=[]), dict)
    config = HttpConfig(port=free_port(), auth_token=TOKEN, max_body_bytes=MAX_BODY, max_concurrent_requests=1)
    endpoint = WsEndpoint(server, WsConfig.from_http(config, max_frame_bytes=MAX_BODY))
    app = create_app(server, config, extra_routes={endpoint.config.path: endpoint})
    uvicorn_server = WsUvicornServer(uvicorn_config(app, config, log_level="error",
                                                    **endpoint.config.uvicorn_options()), [endpoint])
    thread = threading.Thread(target=uvicorn_server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uvicorn_server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.01)
    yield Served(config.port, trail)
    uvicorn_server.should_exit = True
    thread.join(timeout=20)
    close()


def _salted(identity: str) -> str:
    return identity.split(":")[0] + ":" + hmac.new(SALT, identity.encode(), hashlib.sha256).hexdigest()[:32]


def _event_of(response: httpx.Response) -> str:
    body = response.json()
    return body["error"]["data"]["eventId"] if "error" in body and isinstance(body["error"], dict) else body["eventId"]


def _rpc(method: str, params: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def test_every_http_refusal_gets_a_line_with_the_clients_event_id(served: Served) -> None:
    call = _rpc("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    traced = {"traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01"}
    cases = {
        "unauthorized": httpx.post(served.base + "/mcp", json=call, headers={**JSON_AND_SSE, **traced}),
        "forbidden host": httpx.post(served.base + "/mcp", json=call, headers={**AUTH, **JSON_AND_SSE,
                                                                              "host": "evil.example"}),
        "forbidden origin": httpx.post(served.base + "/mcp", json=call, headers={**AUTH, **JSON_AND_SSE,
                                                                                "origin": "http://evil.example"}),
        "oversize": httpx.post(served.base + "/mcp", content=b"[" + b"1," * MAX_BODY + b"1]",
                               headers={**AUTH, **JSON_AND_SSE, "content-type": "application/json"}),
        "malformed": httpx.post(served.base + "/mcp", content=b'{"jsonrpc": "2.0", "id": 1,',
                                headers={**AUTH, **JSON_AND_SSE, "content-type": "application/json"}),
        "rest malformed": httpx.post(served.base + "/mcp/tools/call", content=b"{not json",
                                     headers={**AUTH, "content-type": "application/json"}),
        "unknown path": httpx.get(served.base + "/nowhere", headers=AUTH),
        "rest text/plain": httpx.post(served.base + "/mcp/tools/call", content=b'{"name": "ping"}',
                                      headers={**AUTH, "content-type": "text/plain"}),
    }
    expected = {"unauthorized": (401, "unauthorized", "http"), "forbidden host": (403, "forbidden", "http"),
                "forbidden origin": (403, "forbidden", "http"), "oversize": (413, "payload_too_large", "http"),
                "malformed": (400, "parse_error", "http"), "rest malformed": (400, "parse_error", "rest"),
                "unknown path": (404, "method_not_found", "http"),
                "rest text/plain": (415, "invalid_request", "rest")}
    for name, response in cases.items():
        status, code, transport = expected[name]
        assert response.status_code == status, name
        line = served.line_of(_event_of(response))
        assert (line["kind"], line["errorCode"], line["transport"], line["outcome"]) == ("refusal", code, transport,
                                                                                         "error"), name
        # Salted: whatever identity the transport gives (client_identity.py), never the token or address.
        assert re.fullmatch(r"[a-z]+:[0-9a-f]{32}", line["client"]), name
        assert line["path"] in ("/mcp", "/mcp/tools/call", "/nowhere"), name
    unauthorized = served.line_of(_event_of(cases["unauthorized"]))
    assert unauthorized["client"] == _salted("address:127.0.0.1") and unauthorized["traceId"] == TRACE_ID
    raw = served.trail.read_text()
    assert TOKEN not in raw and "127.0.0.1" not in raw
    # The gates refuse before the body is read (a stranger's upload is never taken in); a body that was read
    # is accounted for.
    for name in ("unauthorized", "forbidden host", "oversize"):
        assert served.line_of(_event_of(cases[name]))["bodyBytes"] is None, name
    malformed = served.line_of(_event_of(cases["malformed"]))
    assert malformed["bodyBytes"] == 27 and malformed["method"] is None


def test_the_concurrency_cap_refusal_gets_a_line(served: Served) -> None:
    slow = _rpc("tools/call", {"name": "slow", "arguments": {"seconds": 1.0, "steps": 1}}, 7)
    with httpx.Client(headers={**AUTH, **JSON_AND_SSE}) as client:
        holder = threading.Thread(target=client.post, args=(served.base + "/mcp",), kwargs={"json": slow})
        holder.start()
        try:
            for _ in range(100):
                busy = client.post(served.base + "/mcp", json=_rpc("ping", {}, 8))
                if busy.status_code == 503:
                    break
                time.sleep(0.01)
        finally:
            holder.join()
    assert busy.status_code == 503
    line = served.line_of(_event_of(busy))
    assert (line["kind"], line["errorCode"], line["method"], line["requestId"]) == ("refusal", "server_busy",
                                                                                     "ping", 8)


def test_resources_prompts_and_rest_calls_get_lines(served: Served) -> None:
    with httpx.Client(headers={**AUTH, **JSON_AND_SSE}) as client:
        before = len(served.lines())
        assert client.post(served.base + "/mcp/resources/read", json={"uri": "demo://greeting"}).status_code == 200
        assert client.post(served.base + "/mcp", json=_rpc("resources/read", {"uri": "demo://items/apple"})).status_code == 200
        assert client.post(served.base + "/mcp", json=_rpc("prompts/get", {"name": "greet", "arguments": {
            "name": "Ada"}})).status_code == 200
    for _ in range(100):
        new = served.lines()[before:]
        if len(new) == 3:
            break
        time.sleep(0.02)
    rest, http, prompt = new
    assert all(line["outcome"] == "ok" for line in new)
    assert (rest["method"], rest["target"], rest["transport"]) == ("resources/read", "demo://greeting", "rest")
    assert (http["method"], http["target"], http["transport"]) == ("resources/read", "demo://items/apple", "http")
    assert (prompt["method"], prompt["params"]["arguments"]) == ("prompts/get", {"name": "Ada"})
    # The static token's identity is its configured name (--auth-token-name, default "token"), never the token.
    assert {line["client"] for line in new} == {_salted("token:token")}
    assert TOKEN not in served.trail.read_text()


def test_a_call_with_arguments_over_8_kib_replays_to_the_identical_request(served: Served, tmp_path: Path) -> None:
    from hexmcp.adapters.audit.reader import replay_request

    request = _rpc("tools/call", {"name": "echo", "arguments": {"text": "z" * 20_000 + " \u00e9 \U0001f600"}}, 99)
    answer = httpx.post(served.base + "/mcp", json=request, headers={**AUTH, **JSON_AND_SSE})
    assert answer.status_code == 200
    for _ in range(100):
        [line] = [line for line in served.lines() if line.get("requestId") == 99] or [None]
        if line is not None:
            break
        time.sleep(0.02)
    assert replay_request(line) == request
    done = subprocess.run([*HEXMCP, "audit", str(served.trail), "--replay", line["eventId"]], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == ExitCode.OK, done.stderr
    assert json.loads(done.stdout) == request
    replayed = httpx.post(served.base + "/mcp", content=done.stdout, headers={**AUTH, **JSON_AND_SSE,
                                                                              "content-type": "application/json"})
    assert replayed.json()["result"] == answer.json()["result"]  # the replay is the same call


async def test_websocket_requests_and_refusals_get_lines(served: Served) -> None:
    with pytest.raises(InvalidStatus) as refused:
        async with connect(served.ws):  # no token
            pass
    upgrade = json.loads(refused.value.response.body)["error"]["data"]["eventId"]
    async with ChatGptClient.connect(served.ws, additional_headers=AUTH) as client:
        await client.initialize()
        read = await client.call("resources/read", {"uri": "demo://greeting"})
        assert "result" in read
        await client.ws.send("{not json")
        parse_error = await client.recv()
        await client.ws.send(b"\x00binary")
        binary = await client.recv()
    await asyncio.sleep(0.05)
    assert served.line_of(upgrade)["transport"] == "ws" and served.line_of(upgrade)["errorCode"] == "unauthorized"
    for answer, code in ((parse_error, "parse_error"), (binary, "invalid_request")):
        line = served.line_of(answer["error"]["data"]["eventId"])
        assert (line["kind"], line["transport"], line["errorCode"]) == ("refusal", "ws", code)
        assert line["sessionId"] and line["client"].startswith("token:")
    ws_lines = [line for line in served.lines() if line["transport"] == "ws" and line["kind"] == "request"]
    assert [line["method"] for line in ws_lines][-2:] == ["initialize", "resources/read"]


async def test_a_websocket_frame_over_the_limit_gets_a_line(served: Served) -> None:
    async with ChatGptClient.connect(served.ws, additional_headers=AUTH, max_size=None) as client:
        await client.initialize()
        session = [line for line in served.lines() if line["transport"] == "ws"][-1]["sessionId"]
        with pytest.raises(ConnectionClosedError) as closed:
            await client.ws.send("x" * (MAX_BODY + 10))
            await client.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    for _ in range(100):
        found = [line for line in served.lines() if line["sessionId"] == session and line["kind"] == "refusal"]
        if found:
            break
        await asyncio.sleep(0.02)
    [line] = found
    assert (line["transport"], line["errorCode"]) == ("ws", "payload_too_large")
