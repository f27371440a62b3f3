"""One real embedder for the knowledge tests: the classification tools' MiniLM, converted once."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexmcp.tools.knowledge.embedder import PassageEmbedder

CORPUS = {
    "guide/install.md": "---\ntitle: Installing Widgetd\n---\n# Installing\n\nRun `pip install widgetd` in a "
                        "virtual environment.\n\n## Upgrading\n\nUpgrade with pip and restart the daemon.\n",
    "guide/storage.md": "# Storage\n\nWidgetd keeps its data in a SQLite file under the state directory.\n\n"
                        "## Backups\n\nCopy the database file while the daemon is stopped to back it up.\n",
    "notes/cooking.rst": "Cooking\n=======\n\nBoil the pasta in salted water for nine minutes.\n",
    "notes/weather.txt": "Tomorrow will be rainy with strong winds from the north.\n",
}


@pytest.fixture(scope="session")
def knowledge_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hexmcp-knowledge-cache")


@pytest.fixture(scope="session")
def embedder(knowledge_cache: Path) -> PassageEmbedder:
    return PassageEmbedder.load(cache_dir=knowledge_cache)


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    for name, text in CORPUS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path
