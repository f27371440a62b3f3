"""The five concept tools, the concept:// resources and the explain-concept prompt, through the core
(no wire): each answer checked against its output schema by the core, and by what it must mean."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexmcp.core.registrar import Registrar
from hexmcp.core import McpServer
from hexmcp.tools.concepts import resolver
from hexmcp.tools.concepts.vocabulary import RESOLVED_SCORE
from hexmcp.tools.concepts.mcp_tools import register_concept_tools
from hexmcp.tools.knowledge.corpus import CorpusSpec
from hexmcp.tools.knowledge.mcp_tools import register_knowledge_tools
from hexmcp.tools.knowledge.service import KnowledgeConfig
from tests.support.peer import CoreClient, RecordingPeer

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
async def client(corpus_dir: Path, concepts_cache: Path, embedder) -> CoreClient:
    server = McpServer("concepts-test", "0")
    knowledge = register_knowledge_tools(Registrar(server), KnowledgeConfig(corpus=CorpusSpec(roots=[corpus_dir]),
                                                                 cache_dir=concepts_cache))
    concepts = register_concept_tools(server, knowledge)
    client = CoreClient(server, RecordingPeer())
    await client.initialize()
    await concepts.start()
    return client


async def call(client: CoreClient, name: str, arguments: dict) -> dict:
    result = await client.ok("tools/call", {"name": name, "arguments": arguments})
    assert not result.get("isError"), result
    return result["structuredContent"]


def test_the_description_states_the_resolver_threshold() -> None:
    assert RESOLVED_SCORE == resolver.RESOLVED_SCORE


@pytest.mark.parametrize(("term", "expected", "how"), [
    ("write-ahead-log", "write-ahead-log", "id"),
    ("WAL", "write-ahead-log", "alias"),
    ("Write-ahead logs", "write-ahead-log", "alias"),
    ("write ahed log", "write-ahead-log", "fuzzy"),
    ("Widget Relay Protocl", "widget-relay-protocol", "fuzzy"),
    ("copying the database while the service is down", "backups|snapshot", "semantic"),  # the section, or its term
])
async def test_resolve_tries_id_alias_spelling_then_meaning(client: CoreClient, term: str, expected: str,
                                                            how: str) -> None:
    found = await call(client, "resolveConcept", {"term": term})
    best = found["items"][0]
    assert best["id"] in expected.split("|") and best["matched"] == how
    assert found["resolved"] and 0 <= best["score"] <= 1 and len(found["items"]) <= 6
    assert len({item["id"] for item in found["items"]}) == len(found["items"])


async def test_an_unknown_term_gets_its_nearest_candidates_not_an_error(client: CoreClient) -> None:
    found = await call(client, "resolveConcept", {"term": "quantum chromodynamics of gluons"})
    assert found["items"] and not found["resolved"]
    assert all(item["matched"] == "semantic" and item["score"] < RESOLVED_SCORE for item in found["items"])


async def test_explain_cites_defining_passages_and_names_related_concepts(client: CoreClient, corpus_dir: Path) -> None:
    items = (await call(client, "explainConcept", {"conceptId": "snapshot", "passages": 2}))["items"]
    concept, passages, related = items[0], [i for i in items if i["kind"] == "passage"], items[1 + 2:]
    assert concept["kind"] == "concept" and concept["summary"].startswith("A **snapshot** is a copy")
    text = (corpus_dir / "guide/widget-storage.md").read_text()
    citation = concept["citation"]
    assert text[citation["offsets"]["start"]:citation["offsets"]["end"]] == concept["summary"]
    assert len(passages) == 2 and passages[0]["defines"] and passages[0]["score"] >= passages[1]["score"]
    for passage in passages:
        document = (corpus_dir / passage["documentId"]).read_text()
        offsets = passage["offsets"]
        assert document[offsets["start"]:offsets["end"]] == passage["text"]
        assert passage["citation"]["indexVersion"] == citation["indexVersion"]
    assert related and all(r["kind"] == "concept" and 0 < r["weight"] <= 1 for r in related)


async def test_query_graph_is_bounded_and_says_when_it_is_cut(client: CoreClient) -> None:
    whole = (await call(client, "queryGraph", {"conceptId": "widget-storage", "depth": 2, "limit": 500}))["items"][0]
    assert not whole["truncated"] and whole["note"] is None
    ids = {n["id"] for n in whole["nodes"]}
    assert {"backups", "write-ahead-log", "doc:guide/widget-storage.md"} <= ids
    assert all(e["source"] in ids and e["target"] in ids for e in whole["edges"])
    cut = (await call(client, "queryGraph", {"conceptId": "widget-storage", "depth": 2, "limit": 2}))["items"][0]
    assert cut["truncated"] and "limit=2" in cut["note"] and len(cut["nodes"]) == 2
    broader = (await call(client, "queryGraph", {"conceptId": "widget-storage", "relations": ["narrower"]}))["items"][0]
    assert {e["relation"] for e in broader["edges"]} == {"narrower"}
    assert {n["id"] for n in broader["nodes"]} == {"widget-storage", "backups", "write-ahead-log"}


@pytest.mark.parametrize("metric", ["pagerank", "betweenness", "degree", "communities"])
async def test_analyze_graph_scores_in_unit_range(client: CoreClient, metric: str) -> None:
    items = (await call(client, "analyzeGraph", {"metric": metric, "limit": 50}))["items"]
    assert items and all(i["kind"] == "score" and i["metric"] == metric and 0 <= i["score"] <= 1 for i in items)
    assert [i["rank"] for i in items] == list(range(1, len(items) + 1))
    if metric != "communities":
        assert items[0]["score"] == 1.0 and [i["score"] for i in items] == sorted((i["score"] for i in items), reverse=True)
    local = (await call(client, "analyzeGraph", {"metric": metric, "conceptId": "remote-access"}))["items"]
    assert "remote-access" in {i["conceptId"] for i in local}


async def test_link_entities_gives_exact_spans(client: CoreClient) -> None:
    text = "Before an upgrade, take a snapshot; the WAL and the Widget Relay Protocol keep running."
    items = (await call(client, "linkEntities", {"text": text}))["items"]
    spans = {(i["id"], s["text"]) for i in items for s in i["spans"]}
    assert {("snapshot", "snapshot"), ("write-ahead-log", "WAL"), ("widget-relay-protocol", "Widget Relay Protocol")} <= spans
    for item in items:
        for span in item["spans"]:
            assert text[span["start"]:span["end"]] == span["text"] and 0 < span["confidence"] <= 1
        assert item["confidence"] == max(s["confidence"] for s in item["spans"])
    strict = (await call(client, "linkEntities", {"text": text, "minConfidence": 0.99}))["items"]
    assert strict == []
    assert (await call(client, "linkEntities", {"text": ""}))["items"] == []


async def test_unknown_ids_are_invalid_params_with_the_nearest_ids(client: CoreClient) -> None:
    for name, arguments in [("explainConcept", {"conceptId": "snapshots"}), ("queryGraph", {"conceptId": "snapshots"}),
                            ("analyzeGraph", {"metric": "pagerank", "conceptId": "snapshots"})]:
        rejection = await client.refused_arguments({"name": name, "arguments": arguments})
        assert "snapshots" in rejection.message and "snapshot" in rejection.data["nearest"]
        assert rejection.data["path"] == "$.arguments.conceptId"
    bad = await client.refused_arguments({"name": "queryGraph", "arguments": {"conceptId": "snapshot", "depth": 9}})
    assert "depth" in bad.message
    blank = await client.refused_arguments({"name": "resolveConcept", "arguments": {"term": "   "}})
    assert "empty" in blank.message


async def test_concepts_are_resources_and_the_prompt_is_grounded(client: CoreClient) -> None:
    templates = (await client.ok("resources/templates/list"))["resourceTemplates"]
    assert "concept://{id}" in {t["uriTemplate"] for t in templates}
    read = await client.ok("resources/read", {"uri": "concept://write-ahead-log"})
    assert read["contents"][0]["text"].lower().startswith("# write-ahead log") and "[1] guide/widget-storage.md" in read["contents"][0]["text"]
    missing = await client.rejected("resources/read", {"uri": "concept://nothing-here"})
    assert "nothing-here" in missing.message
    prompt = await client.ok("prompts/get", {"name": "explain-concept", "arguments": {"conceptId": "snapshot"}})
    text = prompt["messages"][0]["content"]["text"]
    assert "only the cited passages" in text and "[1]" in text and "A **snapshot** is a copy" in text
    completed = await client.ok("completion/complete", {"ref": {"type": "ref/prompt", "name": "explain-concept"},
                                                         "argument": {"name": "conceptId", "value": "wri"}})
    assert completed["completion"]["values"] == ["write-ahead-log"]
    by_uri = await client.ok("completion/complete", {"ref": {"type": "ref/resource", "uri": "concept://{id}"},
                                                      "argument": {"name": "id", "value": "widget-r"}})
    assert by_uri["completion"]["values"] == ["widget-relay-protocol"]
