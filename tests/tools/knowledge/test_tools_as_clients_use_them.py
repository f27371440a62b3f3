"""The knowledge and concept tools as a client's LLM uses them, through the official SDK client against a
real `hexmcp serve` over a small versioned corpus; each test holds a defect found that way. A wrong argument
(a version the corpus does not have, a relation kind that does not exist, a garbage cursor, an over-long
value) is invalid_params naming the argument and why, never quoting a long value back whole, and the server
keeps serving; what search gives to fetch says something; a re-index reports the version citations carry."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.support.docs_server import serve_docs
from tests.support.sdk_refusals import refused_arguments

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(180)]

GUIDE = """# Widget guide

A **widget** is a small component that renders one value. Configure a widget with `widget.toml`;
restart the server after changing it. Widgets are cached for {ttl} seconds.

## Caching

The cache keeps rendered widgets in memory. Clear it with `widgetctl cache clear`.
"""
CORPUS = {
    "v1.0/guide.md": GUIDE.format(ttl=30),
    "v2.0/guide.md": GUIDE.format(ttl=60),
    "intro.md": "# Introduction\n\nThis manual explains widgets, gadgets and the rendering server.\n",
    "reference.md": ("# Reference\n\nEvery setting of the rendering server.\n\n## Gadget frame options\n\n"
                     "### gadget.color\n\nSets the colour of the gadget's frame, as a CSS colour name.\n\n"
                     "### gadget.border\n\nSets the width of the gadget's frame border, in pixels.\n"),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, knowledge_cache: Path, embedder) -> Iterator[str]:
    root = tmp_path_factory.mktemp("versioned-corpus")
    for name, text in CORPUS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    with serve_docs(root, knowledge_cache) as base:
        yield base


async def test_refusals_name_the_argument_and_the_server_keeps_serving(server: str) -> None:
    async with streamable_http_client(server + "/mcp") as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            # A version no page is kept in: refused with the versions there are, not an empty list.
            for tool in ("search", "searchPassages"):
                message = await refused_arguments(session, tool, {"query": "widget cache", "version": "9.9"})
                assert "argument version" in message and "'9.9'" in message and "v2.0, v1.0" in message
            kept = (await session.call_tool("search", {"query": "widget cache", "version": "1"})).structured_content
            assert [r["metadata"]["path"] for r in kept["results"]][:1] == ["v1.0/guide.md"]
            nowhere = await refused_arguments(session, "searchPassages", {"query": "widget", "path": "nowhere/"})
            assert "argument path" in nowhere and "'nowhere/'" in nowhere
            # An over-long value is named by its length, not sent back whole.
            long_version = await refused_arguments(session, "search", {"query": "widget", "version": "v" * 101})
            assert long_version.endswith("argument version is 101 characters long; the limit is 100")
            long_text = await refused_arguments(session, "linkEntities", {"text": "widget " * 15_000})
            assert "argument text is 105000 characters long; the limit is 100000" in long_text
            assert len(long_text) < 200
            # A cursor this server never gave, an id that is neither a passage's nor a document's.
            cursor = await refused_arguments(session, "listDocuments", {"cursor": "garbage"})
            assert "argument cursor" in cursor and "nextCursor" in cursor
            fetched = await refused_arguments(session, "fetch", {"id": "nope.md"})
            assert "argument id" in fetched and "'nope.md'" in fetched and "listDocuments" in fetched
            # The server still answers.
            found = (await session.call_tool("search", {"query": "clear the widget cache"})).structured_content
            assert found["results"]


async def test_a_reindex_reports_the_version_citations_carry(server: str) -> None:
    async with streamable_http_client(server + "/mcp") as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            summary = (await session.call_tool("indexDocuments", {"path": "intro.md"})).structured_content
            fetched = (await session.call_tool("fetch", {"id": "intro.md"})).structured_content
            assert summary["documents"] == 1 and summary["version"] == fetched["metadata"]["indexVersion"]


async def test_graph_relations_and_unknown_concept_ids(server: str) -> None:
    async with streamable_http_client(server + "/mcp") as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            resolved = (await session.call_tool("resolveConcept", {"term": "widget"})).structured_content
            concept = resolved["items"][0]["id"]
            # A relation kind that does not exist is a typo to name, not a graph of the concept alone.
            message = await refused_arguments(session, "queryGraph", {"conceptId": concept, "relations": ["defined_in"]})
            assert "argument relations" in message and "'defined_in'" in message and "defined-in" in message
            graph = (await session.call_tool("queryGraph", {"conceptId": concept, "relations": ["defined-in"]}))
            assert graph.structured_content["items"][0]["edges"]
            # An id like no concept's gets no "nearest" ids picked alphabetically.
            unknown = await refused_arguments(session, "explainConcept", {"conceptId": "qqq-zzz"})
            assert "nearest" not in unknown and "resolveConcept" in unknown
            misspelt = await refused_arguments(session, "explainConcept", {"conceptId": concept + "x"})
            assert f"nearest: {concept}" in misspelt


async def test_every_argument_of_the_knowledge_and_concept_tools_is_described(server: str) -> None:
    async with streamable_http_client(server + "/mcp") as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
    names = {"search", "fetch", "listDocuments", "searchPassages", "indexDocuments", "resolveConcept",
             "explainConcept", "queryGraph", "analyzeGraph", "linkEntities"}
    undescribed = [(tool.name, name) for tool in tools if tool.name in names
                   for name, schema in tool.input_schema.get("properties", {}).items() if not schema.get("description")]
    assert undescribed == []


async def test_what_search_gives_fetch_is_more_than_a_heading(server: str) -> None:
    """A section whose text all sits in its subsections is a passage of one heading line: it may rank best
    for its page, but the id search answers with is one whose text says something."""
    async with streamable_http_client(server + "/mcp") as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            passages = (await session.call_tool("searchPassages", {"query": "gadget frame options",
                                                                  "documentId": "reference.md"})).structured_content
            assert passages["items"][0]["text"] == "## Gadget frame options"  # the case this is about
            found = (await session.call_tool("search", {"query": "gadget frame options"})).structured_content
            best = next(r for r in found["results"] if r["metadata"]["path"] == "reference.md")
            fetched = (await session.call_tool("fetch", {"id": best["id"]})).structured_content
            assert "Sets the" in fetched["text"]
