"""A small corpus written to exercise every kind of concept evidence, and one real embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexmcp.tools.knowledge.embedder import PassageEmbedder

CORPUS = {
    "guide/widget-storage.md": (
        "# Widget storage\n\nWidgetd keeps every widget in a **state file**, a SQLite database under the state "
        "directory.\n\n## Backups\n\nA **snapshot** is a copy of the state file taken while the daemon is stopped. "
        "Keep snapshots on another disk.\n\n## Write-ahead log\n\nThe write-ahead log (WAL) records changes before "
        "they reach the state file, so a crash loses nothing.\n"),
    "guide/networking.md": (
        "# Networking\n\nWidgetd listens on a Unix socket. See [widget storage](widget-storage.md) for where the "
        "state file lives.\n\n## Remote access\n\nRemote clients connect through the Widget Relay Protocol (WRP), "
        "which forwards socket traffic over TLS. The state file is never exposed.\n"),
    "guide/install.md": (
        "# Installing\n\nRun `pip install widgetd` in a virtual environment, then start the daemon.\n\n"
        "## Upgrading\n\nStop the daemon, take a snapshot of the state file, upgrade with pip, restart.\n"),
    "notes/cooking.md": "# Pasta\n\nBoil the pasta in salted water for nine minutes, then drain it.\n",
}


def write_corpus(root: Path, files: dict[str, str] = CORPUS) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def concepts_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hexmcp-concepts-cache")


@pytest.fixture(scope="session")
def embedder(concepts_cache: Path) -> PassageEmbedder:
    return PassageEmbedder.load(cache_dir=concepts_cache)


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus")
