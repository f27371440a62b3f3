"""The knowledge tools through every transport of the real `hexmcp` command: Streamable HTTP and
stdio with the official SDK client, the REST dialect, WebSocket in both dialects, and /docs/."""

from __future__ import annotations

import http.client
import json
import sys
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from websockets.asyncio.client import connect

from hexmcp.tools.knowledge.queries import MAX_QUERY_CHARS
from hexmcp.tools.knowledge.service import resource_uri
from tests.fixtures.ws_live import ChatGptClient
from tests.support.docs_server import docs_env, serve_docs
from tests.support.sdk_refusals import refused_arguments
from tests.support.knowledge_corpus import CORPUS

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(120)]

TOOLS = {"search", "fetch", "listDocuments", "searchPassages"}
QUESTION = "how do I make a copy of the database"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    for name, text in CORPUS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def server(corpus: Path, knowledge_cache: Path, embedder) -> Iterator[str]:
    with serve_docs(corpus, knowledge_cache) as base:
        yield base


async def _exercise(session: ClientSession, url_prefix: str) -> None:
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert TOOLS <= set(tools)
    assert all(tools[name].annotations.read_only_hint for name in TOOLS)
    found = await session.call_tool("search", {"query": QUESTION})
    assert len(found.content) == 1 and found.content[0].type == "text"
    results = json.loads(found.content[0].text)
    assert set(results) == {"results"} and found.structured_content == results
    first = results["results"][0]
    assert set(first) == {"id", "title", "url", "metadata"} and first["url"] == url_prefix + "guide/storage.md"
    assert first["metadata"] == {"path": "guide/storage.md"}  # a page kept in one version names no others
    fetched = await session.call_tool("fetch", {"id": first["id"]})
    body = json.loads(fetched.content[0].text)
    assert len(fetched.content) == 1 and set(body) == {"id", "title", "text", "url", "metadata"}
    assert "database" in body["text"] and body["metadata"]["path"] == "guide/storage.md"
    passages = (await session.call_tool("searchPassages", {"query": QUESTION, "limit": 2})).structured_content
    assert passages["items"][0]["kind"] == "passage" and 0 <= passages["items"][0]["score"] <= 1
    narrowed = (await session.call_tool("search", {"query": QUESTION, "path": "notes"})).structured_content
    assert narrowed["results"] and all(r["metadata"]["path"].startswith("notes/") for r in narrowed["results"])
    in_version = (await session.call_tool("searchPassages", {"query": QUESTION, "version": "v7"})).structured_content
    assert in_version["items"]  # no document sits in a version folder: every one is in every version
    listed = (await session.call_tool("listDocuments", {})).structured_content
    assert {d["id"] for d in listed["documents"]} == {"guide/install.md", "guide/storage.md", "notes/cooking.rst",
                                                       "notes/weather.txt"}
    resources = await session.list_resources()
    assert resource_uri("guide/storage.md") in {str(r.uri) for r in resources.resources}
    read = await session.read_resource(resource_uri("guide/storage.md"))
    assert "SQLite" in read.contents[0].text
    templates = await session.list_resource_templates()
    assert any("{path}" in t.uri_template for t in templates.resource_templates)


async def _errors(session: ClientSession) -> None:
    """Each bad call is refused with a message naming what was wrong: -32602 up to 2025-06-18, an isError
    result from 2025-11-25 on (SEP-1303)."""
    cases = [("fetch", {"id": "p-nope"}, "p-nope"), ("search", {"query": "   "}, "empty"),
             ("searchPassages", {"query": "x" * (MAX_QUERY_CHARS + 1)}, str(MAX_QUERY_CHARS)),
             ("searchPassages", {"query": "db", "documentId": "missing.md"}, "missing.md"),
             ("search", {"query": "db", "version": ""}, "version")]
    for tool, arguments, expected in cases:
        assert expected in await refused_arguments(session, tool, arguments)


async def test_streamable_http_with_the_sdk_client(server: str) -> None:
    async with streamable_http_client(server + "/mcp") as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            await _exercise(session, server + "/docs/")
            await _errors(session)


async def test_stdio_with_the_sdk_client(corpus: Path, knowledge_cache: Path, embedder) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "hexmcp.app.cli", "stdio", "--no-classifier",
                                                                 "--docs", str(corpus), "--log-level", "warning"],
                                   env=docs_env(knowledge_cache))
    async with stdio_client(params) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            await _exercise(session, "hexmcp://docs/")  # over stdio a document's URL is its resource URI
            await _errors(session)


def test_the_rest_dialect(server: str) -> None:
    headers = {"content-type": "application/json", "accept": "application/json"}
    answer = httpx.post(server + "/mcp/tools/call", headers=headers, json={
        "method": "tools/call", "params": {"name": "searchPassages", "arguments": {"query": QUESTION}}}).json()
    assert answer["structuredContent"]["items"][0]["documentId"] == "guide/storage.md"


@pytest.mark.parametrize("subprotocol", [None, "mcp"])
async def test_websocket_both_dialects(server: str, subprotocol: str | None) -> None:
    url = server.replace("http://", "ws://") + "/ws"
    options: dict[str, Any] = {"subprotocols": [subprotocol]} if subprotocol else {}
    async with connect(url, **options) as ws:
        client = ChatGptClient(ws)
        envelope = {"jsonrpc": "2.0"} if subprotocol else {}
        request_id = client.next_id()
        await client.send({**envelope, "id": request_id, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
        await client.response(request_id)
        await client.send({**envelope, "method": "notifications/initialized"})
        request_id = client.next_id()
        await client.send({**envelope, "id": request_id, "method": "tools/call",
                           "params": {"name": "search", "arguments": {"query": QUESTION}}})
        answer = await client.response(request_id)
        results = json.loads(answer["result"]["content"][0]["text"])["results"]
        assert results[0]["url"].endswith("/docs/guide/storage.md")


def _raw_get(base: str, raw_path: str) -> tuple[int, str]:
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("GET", raw_path)  # http.client sends the path as given: no dot-segment removal
    response = connection.getresponse()
    return response.status, response.read().decode()


def test_docs_route_serves_corpus_documents_only(server: str, corpus: Path) -> None:
    assert _raw_get(server, "/docs/notes/weather.txt") == (200, (corpus / "notes/weather.txt").read_text())
    (corpus.parent / "secret.md").write_text("# Secret\n")
    for path in ("/docs/../secret.md", "/docs/%2e%2e/secret.md", "/docs/..%2fsecret.md", "/docs/" + str(corpus.parent /
                 "secret.md"), "/docs/", "/docs/guide", "/docs/guide/../../secret.md"):
        status, body = _raw_get(server, path)
        assert status == 404 and "Secret" not in body, path
    assert httpx.post(server + "/docs/notes/weather.txt").status_code == 405
