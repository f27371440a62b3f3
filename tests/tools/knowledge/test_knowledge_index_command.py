"""`hexmcp index`: the real command, a summary line, progress with an ETA, Ctrl-C, a second run served from the cache."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

REPOSITORY = Path(__file__).resolve().parents[3]
ETA_LINE = re.compile(r"indexing: (\d+)/(\d+) passages \((\d+)%\), (\d+\.\d) passages/s, ETA (\d+s|\d+m\d\ds|\d+h\d\dm)")


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "hexmcp.app.cli", "index", *args]


def _index(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_command(*args), capture_output=True, text=True,
                          env={**os.environ, "HEXMCP_CACHE_DIR": str(cache)}, timeout=170)


def _cache_sharing_the_model(knowledge_cache: Path, folder: Path) -> Path:
    """A fresh vector cache that reuses the converted model (converting it again would take most of the test)."""
    (folder / "models").mkdir(parents=True)
    for model in (knowledge_cache / "models").iterdir():
        (folder / "models" / model.name).symlink_to(model)
    return folder


def test_index_summarises_and_a_second_run_embeds_nothing(corpus_dir: Path, knowledge_cache: Path, embedder,
                                                           tmp_path: Path) -> None:
    cache = _cache_sharing_the_model(knowledge_cache, tmp_path / "cache")
    first = _index(str(corpus_dir), cache=cache)
    assert first.returncode == 0, first.stderr
    summary = re.fullmatch(r"(\d+) documents, (\d+) passages \((\d+) embedded, (\d+) cached\), (\d+) tokens, "
                           r"([\d.]+) s, ([\d.]+) passages/s, (\d+) tokens/s, index \w+\n", first.stdout)
    assert summary, first.stdout
    documents, passages, embedded, cached, tokens = map(int, summary.groups()[:5])
    assert (documents, embedded, cached) == (4, passages, 0) and tokens > passages
    seconds, passage_rate, token_rate = map(float, summary.groups()[5:])
    # The final rates are the run's own: its passages and tokens over its time. The time is printed to a tenth
    # of a second, so a short run's rate is known only within what that rounding allows.
    shortest, longest = max(seconds - 0.05, 1e-3), seconds + 0.05
    assert passages / longest - 0.05 <= passage_rate <= passages / shortest + 0.05
    assert tokens / longest - 0.5 <= token_rate <= tokens / shortest + 0.5
    progress = [ETA_LINE.fullmatch(line) for line in first.stderr.splitlines() if line.startswith("indexing: ")]
    assert progress and all(progress), first.stderr  # progress with a rate and an ETA went to stderr, one line each
    assert all(float(line.group(4)) > 0 for line in progress)
    done, total = (int(n) for n in progress[-1].groups()[:2])
    assert (done, total) == (passages, passages) and progress[-1].group(5) == "0s"  # the last line: done, nothing left
    second = _index(str(corpus_dir), cache=cache)
    assert second.returncode == 0 and f"(0 embedded, {passages} cached)" in second.stdout
    # Counted while embedding the first time, by tokenizing the cached passages the second: the same tokens.
    assert f", {tokens} tokens, " in second.stdout, second.stdout
    assert f"indexing: {passages}/{passages} passages (100%), all from the cache" in second.stderr


def test_ctrl_c_stops_cleanly_and_the_next_run_resumes(knowledge_cache: Path, embedder, tmp_path: Path) -> None:
    corpus = tmp_path / "adr"
    shutil.copytree(REPOSITORY / "docs" / "adr", corpus)  # a few hundred passages: long enough to interrupt
    cache = _cache_sharing_the_model(knowledge_cache, tmp_path / "cache")
    # A job started in the background by a shell without job control (a CI script's `&`) inherits SIGINT
    # ignored, and Python then leaves it ignored, as a user of nohup would expect: Ctrl-C as a terminal sends it.
    process = subprocess.Popen(_command(str(corpus)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "HEXMCP_CACHE_DIR": str(cache)},
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = []
    for line in process.stderr:  # the first line with a rate: embedding is under way
        seen.append(line)
        if ETA_LINE.match(line):
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    stderr = "".join(seen) + err
    assert process.returncode == 130, stderr
    assert "interrupted; finished documents are saved" in stderr and "Traceback" not in stderr
    assert out == ""  # no summary for a run that did not finish
    stopped = ETA_LINE.fullmatch([line for line in stderr.splitlines() if line.startswith("indexing: ")][-1])
    assert stopped, stderr  # the last progress line says where it stopped
    saved, total = (int(n) for n in stopped.groups()[:2])
    assert 0 < saved < total
    # A clean state: no temporary file left behind, and every saved document's vectors are whole.
    files = list((cache / "knowledge").iterdir())
    assert files and all(f.suffix == ".npz" for f in files), files
    assert sum(len(np.load(f)["windows"]) for f in files) == saved
    resumed = _index(str(corpus), cache=cache)
    assert resumed.returncode == 0, resumed.stderr
    assert f"passages ({total - saved} embedded, {saved} cached)" in resumed.stdout


def test_a_missing_path_exits_2_naming_it(tmp_path: Path, knowledge_cache: Path) -> None:
    result = _index(str(tmp_path / "absent"), cache=knowledge_cache)
    assert result.returncode == 2 and "absent" in result.stderr


def test_the_token_count_leaves_padding_out(embedder) -> None:
    from hexmcp.tools.knowledge.indexing import TOKEN_COUNT_BATCH, count_tokens

    tokenizer = embedder.encoder.tokenizer
    texts = ["short", "a much longer passage about indexing " * 20] * (TOKEN_COUNT_BATCH // 2 + 10)  # two batches
    assert count_tokens(tokenizer, texts) == sum(len(tokenizer.encode(text).ids) for text in texts)


def test_a_passage_gets_the_vector_a_lone_text_gets_and_its_real_token_count(embedder) -> None:
    encoder = embedder.encoder
    texts = ["short", "a much longer passage about indexing " * 80, "Pods run one or more containers."]
    for text in texts:
        vector, tokens = encoder.embed_sentence(text)
        assert np.array_equal(vector, encoder.embed_one(text)[0])  # bit for bit: the cached vectors stay valid
        assert tokens == len(encoder.tokenizer.encode(text).ids)  # truncated at the window, never padded
    before = embedder.embedded_tokens
    embedder.embed_many(texts)
    assert embedder.embedded_tokens - before == sum(len(encoder.tokenizer.encode(text).ids) for text in texts)
