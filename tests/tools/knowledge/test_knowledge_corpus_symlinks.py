"""Symlinks under a --docs root: followed inside the root, skipped with a log line when they lead out.

A link to a private file (or to a whole directory) dropped into a docs folder once put that file in the
index, in search answers, in `hexmcp://docs/...` and at `/docs/<id>` (issue 30).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from hexmcp.tools.knowledge.corpus import CorpusSpec, discover, load_documents
from hexmcp.tools.knowledge.service import KnowledgeConfig, KnowledgeService

SECRET = "the operator's private key material"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "notes").mkdir(parents=True)
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET}\n", encoding="utf-8")
    (outside / "notes" / "more.md").write_text(f"# More\n\n{SECRET}, again\n", encoding="utf-8")
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "intro.md").write_text("# Intro\n\nThe public guide.\n", encoding="utf-8")
    os.symlink(outside / "secret.md", docs / "secret.md")  # a file link out of the root
    os.symlink("../../outside/secret.md", docs / "guide" / "relative.md")  # the same, relative
    os.symlink(outside / "notes", docs / "notes")  # a directory link out of the root
    os.symlink("guide/intro.md", docs / "alias.md")  # a link inside the root: kept
    os.symlink("loop.md", docs / "loop.md")  # a link to itself: nothing to read
    return docs


def test_links_out_of_the_root_are_skipped_and_logged(root: Path) -> None:
    with capture_logs() as logs:
        found = discover(CorpusSpec(roots=[root]))
    assert [item.document_id for item in found] == ["alias.md", "guide/intro.md"]
    skipped = {entry["path"] for entry in logs if entry["event"].startswith("skipping a symlink")}
    assert skipped == {"secret.md", "guide/relative.md", "notes", "loop.md"}
    assert all(entry["log_level"] == "warning" for entry in logs if entry["event"].startswith("skipping"))
    # a loop leads nowhere, not out of the root: the warning says which (bench/corpus_probes.py)
    nowhere = {entry["path"] for entry in logs if "leads nowhere" in entry["event"]}
    assert nowhere == {"loop.md"}


def test_nothing_outside_reaches_the_documents_the_server_serves(root: Path) -> None:
    documents = load_documents(CorpusSpec(roots=[root]))
    assert sorted(d.document_id for d in documents) == ["alias.md", "guide/intro.md"]
    assert all(SECRET not in d.text for d in documents)

    async def served() -> dict:
        service = KnowledgeService(KnowledgeConfig(corpus=CorpusSpec(roots=[root])))
        await service.ensure_documents()  # what /docs/<id>, hexmcp://docs/ and fetch read from
        return service.documents

    assert sorted(asyncio.run(served())) == ["alias.md", "guide/intro.md"]


def test_a_root_that_is_itself_a_link_is_walked(root: Path, tmp_path: Path) -> None:
    link = tmp_path / "docs-link"
    os.symlink(root, link)
    assert [item.document_id for item in discover(CorpusSpec(roots=[link]))] == ["alias.md", "guide/intro.md"]


def test_folders_the_corpus_never_reads_are_not_walked(root: Path, tmp_path: Path) -> None:
    """A checkout's virtualenv, node_modules and ignored build output are not entered: their files would all
    be left out anyway, and walking them cost a repository root 1.2 s (against 0.13 s) on every read, with a
    warning for each interpreter link a virtualenv holds. A link out of the root inside them is never seen."""
    for folder in (".venv/bin", "node_modules/pkg", "_build/html"):
        (root / folder).mkdir(parents=True)
        os.symlink(tmp_path / "outside" / "secret.md", root / folder / "python.md")
        (root / folder / "page.md").write_text("# Page\n\nBuilt or installed, not written.\n", encoding="utf-8")
    (root / ".gitignore").write_text("_build/\n", encoding="utf-8")
    with capture_logs() as logs:
        found = discover(CorpusSpec(roots=[root]))
    assert [item.document_id for item in found] == ["alias.md", "guide/intro.md"]
    skipped = {entry["path"] for entry in logs if entry["event"].startswith("skipping a symlink")}
    assert skipped == {"secret.md", "guide/relative.md", "notes", "loop.md"}
    with capture_logs() as logs:  # without the rules, the build folder is read (and its link seen) again
        found = discover(CorpusSpec(roots=[root], gitignore=False))
    assert "_build/html/page.md" in [item.document_id for item in found]
    assert "_build/html/python.md" in {entry["path"] for entry in logs if entry["event"].startswith("skipping a symlink")}
