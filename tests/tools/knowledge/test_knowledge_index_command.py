"""`hexmcp index`: the real command, a summary line, a second run served from the cache."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def _index(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hexmcp.app.cli", "index", *args], capture_output=True,
                          text=True, env={**os.environ, "HEXMCP_CACHE_DIR": str(cache)}, timeout=170)


def test_index_summarises_and_a_second_run_embeds_nothing(corpus_dir: Path, knowledge_cache: Path, embedder,
                                                           tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "models").mkdir(parents=True)
    for model in (knowledge_cache / "models").iterdir():  # reuse the converted model, not the vectors
        (cache / "models" / model.name).symlink_to(model)
    first = _index(str(corpus_dir), cache=cache)
    assert first.returncode == 0, first.stderr
    summary = re.fullmatch(r"(\d+) documents, (\d+) passages \((\d+) embedded, (\d+) cached\), (\d+) tokens, "
                           r"[\d.]+ s, [\d.]+ passages/s, index \w+\n", first.stdout)
    assert summary, first.stdout
    documents, passages, embedded, cached, tokens = map(int, summary.groups())
    assert (documents, embedded, cached) == (4, passages, 0) and tokens > passages
    assert "passage/s" in first.stderr  # the progress bar went to stderr
    second = _index(str(corpus_dir), cache=cache)
    assert second.returncode == 0 and f"(0 embedded, {passages} cached)" in second.stdout


def test_a_missing_path_exits_2_naming_it(tmp_path: Path, knowledge_cache: Path) -> None:
    result = _index(str(tmp_path / "absent"), cache=knowledge_cache)
    assert result.returncode == 2 and "absent" in result.stderr
