"""One real embedder for the knowledge tests: the classification tools' MiniLM, converted once."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexmcp.tools.knowledge.embedder import PassageEmbedder
from tests.support.knowledge_corpus import CORPUS


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
