"""`hexmcp serve` with a gateway, end to end: the real command (classifier, knowledge base, gateway tools)
against the scripted local gateway, through the official SDK client, raw JSON-RPC, the REST dialect and
WebSocket. Its stderr is captured whole, so the API key can be looked for in every log line.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import httpx
import mcp_types as types
import pytest
from pydantic import TypeAdapter
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from websockets.asyncio.client import connect

from hexmcp.tools.gateway.port import GatewayErrorKind
from hexmcp.tools.gateway.service import FAILURE_BACKOFF_S, MODELS_TTL_S
from tests.support.fake_gateway import FakeGateway, Script, fake_gateway
from tests.support.net import free_port
from tests.support.sdk_refusals import refused_arguments

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

KEY = "sk-live-KEY-4242-do-not-print"
PROOF = "Prove that the square root of 2 is irrational, step by step."
CONFIG = """
gateway:
  timeout: 5
  models_refresh: 3600
  retries: {max: 2, delay: 0.001, max_delay: 0.002, retry_after_cap: 0.01}
providers:
  routing: {math: qwen3-32b}
"""


class Served:
    def __init__(self, base: str, upstream: FakeGateway, log_path) -> None:
        self.base = base
        self.url = base + "/mcp"
        self.upstream = upstream
        self.log_path = log_path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gateway-serve")
    docs = tmp / "docs"
    docs.mkdir()
    (docs / "routing-guide.md").write_text("# Routing guide\n\nMath goes to the large model.\n")
    (docs / "retry-notes.md").write_text("# Retry notes\n\nRetry 429 and 5xx only.\n")
    (tmp / "gateway.yaml").write_text(CONFIG)
    port = free_port()
    with fake_gateway() as upstream:
        env = {**os.environ, "GATEWAY_URL": upstream.url, "GATEWAY_API_KEY": KEY, "DEFAULT_MODEL": "llama-3.1-8b-instruct",
               "GATEWAY_ALLOWED_MODELS": "tiny", "GATEWAY_MAX_TOKENS": "4096"}
        env.pop("HEXMCP_LOG_LEVEL", None)
        log_path = tmp / "stderr.log"
        with log_path.open("wb") as stderr:
            process = subprocess.Popen([sys.executable, "-m", "hexmcp.app.cli", "serve", "--port", str(port),
                                        "--docs", str(docs), "--gateway-config", str(tmp / "gateway.yaml"),
                                        "--log-level", "debug"], stdout=subprocess.DEVNULL, stderr=stderr, env=env)
            try:
                base = f"http://127.0.0.1:{port}"
                _wait_ready(base, process)
                yield Served(base, upstream, log_path)
            finally:
                process.terminate()
                process.wait(timeout=30)


def _wait_ready(base: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline:
        assert process.poll() is None, "hexmcp serve exited"
        try:
            if httpx.get(base + "/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError("hexmcp serve did not become ready")


def _sdk(served: Served, scenario):
    async def run():
        async with streamable_http_client(served.url) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                session.initialized_with = await session.initialize()
                return await scenario(session)
    return asyncio.run(run())


def _rest(served: Served, method: str, params: dict) -> httpx.Response:
    return httpx.post(f"{served.url}/{method}", json={"method": method, "params": params}, timeout=30)


def test_route_completion_classifies_injects_the_system_prompt_and_routes(served):
    async def scenario(session):
        return await session.call_tool("routeCompletion", {"prompt": PROOF, "maxTokens": 64})

    result = _sdk(served, scenario)
    assert not result.is_error
    answer = result.structured_content
    assert answer["completion"] == served.upstream.reply_text
    assert answer["routing"]["category"] == "math"
    assert answer["routing"]["model"] == "qwen3-32b" and answer["routing"]["modelSource"] == "routing"
    assert answer["usage"] == {"promptTokens": 11, "completionTokens": 7, "totalTokens": 18}
    assert answer["latencyMs"]["total"] >= answer["latencyMs"]["gateway"] > 0
    sent = served.upstream.bodies()[-1]
    assert sent["model"] == "qwen3-32b" and sent["max_tokens"] == 64
    assert sent["messages"][0]["role"] == "system" and sent["messages"][-1] == {"role": "user", "content": PROOF}
    assert ("reasoning_effort" in sent) == answer["routing"]["reasoning"]


def test_the_callers_model_and_system_prompt_win(served):
    async def scenario(session):
        return await session.call_tool("routeCompletion", {"prompt": PROOF, "model": "tiny", "system": "Be brief."})

    answer = _sdk(served, scenario).structured_content
    assert answer["routing"]["model"] == "tiny" and answer["routing"]["modelSource"] == "caller"
    assert served.upstream.bodies()[-1]["messages"][0] == {"role": "system", "content": "Be brief."}


def test_a_caller_spends_the_key_only_on_routed_or_allowed_models_within_the_token_limit(served):
    """The operator's key is not a blank cheque: a model the routing never chooses (and the operator did
    not allow) and a maxTokens above gateway.max_tokens are refused before anything reaches the gateway,
    and a call that names no limit is sent with the server's."""
    sent_before = len(served.upstream.bodies())

    async def scenario(session):
        # -32602 up to 2025-06-18, an isError result from 2025-11-25 on (SEP-1303): the message either way.
        refused = [await refused_arguments(session, "routeCompletion", arguments)
                   for arguments in ({"prompt": PROOF, "model": "gpt-most-expensive"},
                                     {"prompt": PROOF, "maxTokens": 1_000_000})]
        unbounded = await session.call_tool("routeCompletion", {"prompt": PROOF})
        return refused, unbounded

    refused, unbounded = _sdk(served, scenario)
    assert "model 'gpt-most-expensive' is not one this server routes to" in refused[0]
    assert "qwen3-32b" in refused[0] and "tiny" in refused[0]  # it names what may be asked for
    assert "maxTokens 1000000 is above this server's limit of 4096" in refused[1]
    bodies = served.upstream.bodies()
    assert len(bodies) == sent_before + 1  # only the honest call reached the gateway
    assert not unbounded.is_error and bodies[-1]["max_tokens"] == 4096


def test_streamed_text_reaches_the_sdk_client_as_progress(served):
    served.upstream.queue("chat", Script(stream=("Root", "two", "is", "irrational.")))
    messages: list[str] = []
    values: list[float] = []

    async def on_progress(progress, total, message) -> None:
        values.append(progress)
        messages.append(message)

    async def scenario(session):
        return await session.call_tool("routeCompletion", {"prompt": PROOF}, progress_callback=on_progress)

    result = _sdk(served, scenario)
    assert result.structured_content["completion"] == "Root two is irrational."
    assert "".join(messages) == "Root two is irrational."
    assert values == sorted(values) and values[-1] == len("Root two is irrational.")
    assert served.upstream.bodies()[-1]["stream"] is True


def test_a_gateway_failure_is_a_tool_error_carrying_the_design_code(served):
    served.upstream.queue("chat", *[Script(status=429, headers={"retry-after": "0"})] * 3)

    async def scenario(session):
        return await session.call_tool("routeCompletion", {"prompt": "What year did WW2 end?"})

    result = _sdk(served, scenario)
    assert result.is_error
    error = json.loads(result.content[0].text)["error"]
    assert error["code"] == GatewayErrorKind.RATE_LIMITED.value
    assert error["data"] == {"code": -32002, "kind": "rate_limited", "status": 429, "attempts": 3,
                             "eventId": result.meta["io.hexmcp/eventId"]}


def test_list_models_tool_and_resources(served):
    async def scenario(session):
        listed = await session.call_tool("listModels", {})
        resources = await session.list_resources()
        catalogue = await session.read_resource("hexmcp://models")
        category = await session.read_resource("hexmcp://categories/math")
        return listed, resources, catalogue, category

    listed, resources, catalogue, category = _sdk(served, scenario)
    math = json.loads(category.contents[0].text)
    assert math["name"] == "math" and math["model"] == "qwen3-32b" and math["systemPrompt"]
    models = {m["id"]: m for m in listed.structured_content["models"]}
    assert {"qwen3-32b", "llama-3.1-8b-instruct"} <= models.keys()
    assert "math" in models["qwen3-32b"]["capabilities"]["categories"]
    assert models["qwen3-32b"]["capabilities"]["served"] is True and models["qwen3-32b"]["provider"] == "openai"
    uris = {str(r.uri) for r in resources.resources}
    assert {"hexmcp://models", "hexmcp://models/qwen3-32b"} <= uris
    assert json.loads(catalogue.contents[0].text)["models"] == listed.structured_content["models"]


def test_models_list_is_advertised_and_answered_on_every_transport(served):
    async def scenario(session):
        advertised = session.initialized_with.capabilities.experimental
        answer = await session.send_request(types.Request(method="models/list", params=None), TypeAdapter(dict))
        return advertised, answer

    advertised, sdk_answer = _sdk(served, scenario)
    assert "models/list" in advertised
    ids = [m["id"] for m in sdk_answer["models"]]
    rest = _rest(served, "models/list", {})
    assert rest.status_code == 200 and [m["id"] for m in rest.json()["models"]] == ids
    one_shot = httpx.post(served.url, json={"jsonrpc": "2.0", "id": 1, "method": "models/list"},
                          headers={"accept": "application/json, text/event-stream"}, timeout=30)
    assert [m["id"] for m in one_shot.json()["result"]["models"]] == ids

    async def over_ws():
        async with connect(served.base.replace("http", "ws") + "/ws", subprotocols=["mcp"]) as ws:
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
            initialized = json.loads(await ws.recv())
            await ws.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "models/list"}))
            return initialized, json.loads(await ws.recv())

    initialized, ws_answer = asyncio.run(over_ws())
    assert "models/list" in initialized["result"]["capabilities"]["experimental"]
    assert [m["id"] for m in ws_answer["result"]["models"]] == ids


def test_models_list_failure_is_a_json_rpc_error_with_the_design_code(served):
    served.upstream.queue("models", Script(status=401, body={"error": {"message": f"bad key {KEY}"}}))
    time.sleep(MODELS_TTL_S)  # the list an earlier test read is served until then, not read again
    one_shot = httpx.post(served.url, json={"jsonrpc": "2.0", "id": 3, "method": "models/list"},
                          headers={"accept": "application/json, text/event-stream"}, timeout=30)
    error = one_shot.json()["error"]
    assert error["code"] == GatewayErrorKind.AUTHENTICATION.value and error["data"]["status"] == 401
    assert KEY not in one_shot.text


def test_completion_complete_suggests_categories_models_and_documents(served):
    async def scenario(session):
        categories = await session.complete(types.PromptReference(name="routed_prompt"), {"name": "category", "value": "ma"})
        model_names = await session.complete(types.PromptReference(name="ask_model"), {"name": "model", "value": "QWEN3"})
        from_template = await session.complete(types.ResourceTemplateReference(uri="hexmcp://models/{model}"),
                                               {"name": "model", "value": "llama-3.1"})
        documents = await session.complete(types.PromptReference(name="ask_about_document"),
                                           {"name": "documentId", "value": "retry"})
        prompt = await session.get_prompt("ask_about_document", {"documentId": "retry-notes.md", "question": "What?"})
        return categories, model_names, from_template, documents, prompt

    categories, model_names, from_template, documents, prompt = _sdk(served, scenario)
    assert categories.completion.values == ["math"]
    assert model_names.completion.values == ["qwen3-32b"]
    assert from_template.completion.values == ["llama-3.1-8b-instruct"]
    assert documents.completion.values == ["retry-notes.md"]
    assert "Retry 429 and 5xx only." in prompt.messages[0].content.resource.text


def test_cancellation_aborts_the_upstream_request(served):
    upstream = served.upstream
    upstream.disconnects.clear()
    upstream.queue("chat", Script(hang=True))
    headers = {"accept": "application/json, text/event-stream"}

    async def run() -> None:
        async with httpx.AsyncClient(base_url=served.base, timeout=30) as client:
            init = await client.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                "clientInfo": {"name": "t", "version": "1"}}})
            session = {**headers, "mcp-session-id": init.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
            await client.post("/mcp", headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            before = upstream.count("chat")
            call = asyncio.ensure_future(client.post("/mcp", headers=session, json={
                "jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": {"name": "routeCompletion", "arguments": {"prompt": "What is 2 + 2?"}}}))
            while upstream.count("chat") == before:
                await asyncio.sleep(0.02)
            await client.post("/mcp", headers=session, json={"jsonrpc": "2.0", "method": "notifications/cancelled",
                                                             "params": {"requestId": 5, "reason": "user"}})
            while not upstream.disconnects:
                await asyncio.sleep(0.02)
            call.cancel()

    asyncio.run(run())
    assert upstream.disconnects == ["/v1/chat/completions"]


def test_a_closed_client_connection_aborts_the_upstream_request(served):
    upstream = served.upstream
    upstream.disconnects.clear()
    upstream.queue("chat", Script(hang=True))

    async def run() -> None:
        before = upstream.count("chat")
        client = httpx.AsyncClient(timeout=30)
        call = asyncio.ensure_future(client.post(served.url + "/tools/call", json={
            "name": "routeCompletion", "arguments": {"prompt": "What is 3 + 3?"}}))
        while upstream.count("chat") == before:
            await asyncio.sleep(0.02)
        call.cancel()  # drops the connection mid-request
        await client.aclose()
        while not upstream.disconnects:
            await asyncio.sleep(0.02)

    asyncio.run(run())
    assert upstream.disconnects == ["/v1/chat/completions"]


def test_health_shows_the_gateway_and_no_key_appears_anywhere(served):
    served.upstream.queue("chat", Script(status=401, body={"error": {"message": f"Incorrect API key provided: {KEY}"}}))
    refused = _rest(served, "tools/call", {"name": "routeCompletion", "arguments": {"prompt": "hello there"}})
    time.sleep(FAILURE_BACKOFF_S)  # a failure an earlier test saw is answered until then, not read again
    assert _rest(served, "tools/call", {"name": "listModels", "arguments": {}}).status_code == 200  # a fresh check
    health = httpx.get(served.base + "/health", timeout=10)
    gateway = health.json()["gateway"]
    assert gateway["configured"] is True and gateway["state"] == "ok" and gateway["url"] == served.upstream.url
    assert gateway["models"] == len(served.upstream.models)
    assert all(headers.get("authorization") == f"Bearer {KEY}" for headers in served.upstream.headers_seen())
    log = served.log()
    assert "gateway connection" in log and "latency_ms" in log
    for text in (refused.text, health.text, log):
        assert KEY not in text
    assert "***" in refused.text  # the gateway's echo of the key, redacted
