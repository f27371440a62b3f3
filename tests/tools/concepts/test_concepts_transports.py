"""The concept tools through every transport of the real `hexmcp` command: Streamable HTTP and stdio with
the official SDK client (which checks structuredContent against each outputSchema), the REST dialect
and WebSocket."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Iterator

import httpx
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from websockets.asyncio.client import connect

from tests.fixtures.ws_live import ChatGptClient
from tests.support.docs_server import docs_env, serve_docs
from tests.support.sdk_refusals import refused_arguments
from tests.tools.concepts.conftest import write_corpus

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(180)]

TOOLS = {"resolveConcept", "explainConcept", "queryGraph", "analyzeGraph", "linkEntities"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("concepts-corpus"))


@pytest.fixture(scope="module")
def server(corpus: Path, concepts_cache: Path, embedder) -> Iterator[str]:
    with serve_docs(corpus, concepts_cache) as base:
        yield base


async def _exercise(session: ClientSession) -> None:
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert TOOLS <= set(tools) and all(tools[n].output_schema and tools[n].annotations.read_only_hint for n in TOOLS)
    resolved = await session.call_tool("resolveConcept", {"term": "WAL"})
    assert resolved.structured_content["items"][0]["id"] == "write-ahead-log"
    explained = (await session.call_tool("explainConcept", {"conceptId": "write-ahead-log"})).structured_content
    assert [i["kind"] for i in explained["items"]][:2] == ["concept", "passage"]
    graph = (await session.call_tool("queryGraph", {"conceptId": "widget-storage", "depth": 2})).structured_content
    assert graph["items"][0]["kind"] == "graph" and graph["items"][0]["edges"]
    scores = (await session.call_tool("analyzeGraph", {"metric": "pagerank", "limit": 3})).structured_content
    assert len(scores["items"]) == 3 and scores["items"][0]["score"] == 1.0
    linked = (await session.call_tool("linkEntities", {"text": "Take a snapshot first."})).structured_content
    assert linked["items"][0]["spans"][0]["start"] == 7
    templates = (await session.list_resource_templates()).resource_templates
    assert "concept://{id}" in {t.uri_template for t in templates}
    read = await session.read_resource("concept://snapshot")
    assert "A **snapshot** is a copy" in read.contents[0].text
    prompt = await session.get_prompt("explain-concept", {"conceptId": "snapshot"})
    assert "[1] guide/widget-storage.md" in prompt.messages[0].content.text
    completed = await session.complete(types.PromptReference(name="explain-concept"),
                                       {"name": "conceptId", "value": "sna"})
    assert completed.completion.values == ["snapshot"]
    assert "nothing-known" in await refused_arguments(session, "explainConcept", {"conceptId": "nothing-known"})


async def test_streamable_http_with_the_sdk_client(server: str) -> None:
    async with streamable_http_client(server + "/mcp") as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            await _exercise(session)


async def test_stdio_with_the_sdk_client(corpus: Path, concepts_cache: Path, embedder) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "hexmcp.app.cli", "stdio", "--no-classifier",
                                                                 "--docs", str(corpus), "--log-level", "warning"],
                                   env=docs_env(concepts_cache))
    async with stdio_client(params) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            await _exercise(session)


def test_the_rest_dialect(server: str) -> None:
    headers = {"content-type": "application/json", "accept": "application/json"}
    answer = httpx.post(server + "/mcp/tools/call", headers=headers, json={
        "method": "tools/call", "params": {"name": "resolveConcept", "arguments": {"term": "Widget Relay Protocl"}}},
        timeout=60).json()
    best = answer["structuredContent"]["items"][0]
    assert (best["id"], best["matched"]) == ("widget-relay-protocol", "fuzzy")


async def test_websocket(server: str) -> None:
    async with connect(server.replace("http://", "ws://") + "/ws", subprotocols=["mcp"]) as ws:
        client = ChatGptClient(ws)
        request_id = client.next_id()
        await client.send({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
        await client.response(request_id)
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        request_id = client.next_id()
        await client.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
            "name": "queryGraph", "arguments": {"conceptId": "widget-storage", "limit": 2}}})
        graph = (await client.response(request_id))["result"]["structuredContent"]["items"][0]
        assert graph["truncated"] and len(graph["nodes"]) == 2


def test_health_turns_warm_once_the_concepts_are_built(server: str) -> None:
    """What benchmarks wait for (bench/warm.py): `warm` only once the index is complete and the concept
    base built, both named in /health."""
    deadline = time.monotonic() + 60
    while not (health := httpx.get(server + "/health").json())["warm"]:
        assert not (health["concepts"]["ready"] and health["knowledge"]["complete"]), health
        assert time.monotonic() < deadline, health
        time.sleep(0.1)
    assert health["status"] == "ok" and health["concepts"]["concepts"] > 0 and health["concepts"]["edges"] > 0
