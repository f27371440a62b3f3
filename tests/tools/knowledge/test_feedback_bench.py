"""bench/relevance_feedback.py: its control row must be the served search (or its variants' differences would not
be the expansion's alone), the expansion must pick the feedback passages' own terms, and an expanded query must
reach a page that shares none of the question's words."""

from __future__ import annotations

from pathlib import Path

import pytest
from exact_store import ExactStore

from bench.relevance_feedback import VARIANTS, Feedback, TermStatistics, with_feedback
from hexmcp.tools.knowledge.builder import build_index
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.fusion import Method

pytestmark = pytest.mark.slow

# The question's words are on the page that introduces the feature; the page that documents it uses its own term.
_PAGES = {
    "playbooks/partial.md": "# Running part of a playbook\n\nTo run only part of a playbook, label its tasks with "
                            "tags and select them with tags on the command line.\n",
    "playbooks/tagging.md": "# Tags\n\nTags label tasks. A tag selects tasks; skip-tags excludes tagged tasks.\n",
    "playbooks/inventory.md": "# Inventory\n\nThe inventory lists hosts and groups of hosts.\n",
    "playbooks/vars.md": "# Variables\n\nVariables hold values for hosts, groups and roles.\n",
}


def _index(root: Path, embedder, pages: dict[str, str]):  # noqa: ANN001, ANN202 - a test helper
    for name, text in pages.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return build_index(load_documents(CorpusSpec(roots=[root])), embedder, ExactStore(embedder.dimension))


def _ranked(index, query: str) -> list[str]:  # noqa: ANN001
    return [h.document.document_id for h in index.search_documents(query, 4, method=Method.HYBRID)]


def test_the_control_row_ranks_as_the_served_search(corpus_dir: Path, embedder) -> None:  # noqa: ANN001
    index = build_index(load_documents(CorpusSpec(roots=[corpus_dir])), embedder, ExactStore(embedder.dimension))
    control = with_feedback(index, TermStatistics([p.indexed_text() for p in index.passages]), VARIANTS["control"])
    for query in ("how do I make a copy of the database", "upgrade the daemon", "rain tomorrow", "pasta"):
        assert [(h.document.document_id, h.best.score) for h in control.search_documents(query, 4)] == \
               [(h.document.document_id, h.best.score) for h in index.search_documents(query, 4)]


def test_the_expansion_is_the_feedback_passages_own_rare_terms_in_their_surface_form() -> None:
    statistics = TermStatistics(["tasks carry tags; tags select tasks", "hosts and groups", "tasks of hosts"])
    expansion = statistics.expansion([0], excluded=statistics.query_terms("select the tasks"), count=2)
    assert expansion[0] == ("tag", "tags")  # twice in the passage, in one passage of three
    assert all(term not in {"select", "task"} for term, _ in expansion)  # the query's own terms are not added
    assert statistics.expansion([0], excluded=set(), count=0) == []


def test_lexical_feedback_finds_the_page_named_by_its_own_term(tmp_path: Path, embedder) -> None:  # noqa: ANN001
    index = _index(tmp_path, embedder, _PAGES)
    index.dense_weight = 0.0  # BM25 alone orders the fused list, so the page can only come from the expansion
    query = "how do I run only part of a playbook"
    expanded = with_feedback(index, TermStatistics([p.indexed_text() for p in index.passages]),
                             Feedback(source="bm25", passages=1, terms=3, weight=0.5))
    served, found = _ranked(index, query), _ranked(expanded, query)
    assert found[:2] == ["playbooks/partial.md", "playbooks/tagging.md"]
    assert "playbooks/tagging.md" not in served[:2]
