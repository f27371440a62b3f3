"""The weights' and cached models' digests are remembered per file state, never trusted past a change."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from hexmcp.tools.embedding import model_files
from hexmcp.tools.embedding.model_files import memoised_sha256


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every real hash computation, recorded."""
    calls: list[Path] = []
    real = model_files.file_sha256

    def counting(path: Path, chunk_size: int = 1 << 20) -> str:
        calls.append(path)
        return real(path, chunk_size)

    monkeypatch.setattr(model_files, "file_sha256", counting)
    return calls


def test_an_unchanged_file_is_hashed_once(tmp_path: Path, hashed: list[Path]) -> None:
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"x" * 1000)
    first = memoised_sha256(weights, tmp_path / "memo")
    assert memoised_sha256(weights, tmp_path / "memo") == first == hashlib.sha256(b"x" * 1000).hexdigest()
    assert len(hashed) == 1


@pytest.mark.parametrize("change", ["truncate", "rewrite same size"])
def test_a_changed_file_is_hashed_again(tmp_path: Path, hashed: list[Path], change: str) -> None:
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"x" * 1000)
    memoised_sha256(weights, tmp_path / "memo")
    if change == "truncate":
        weights.write_bytes(b"x" * 500)
    else:
        state = weights.stat()
        weights.write_bytes(b"y" * 1000)
        os.utime(weights, ns=(state.st_atime_ns, state.st_mtime_ns + 1_000_000))
    assert memoised_sha256(weights, tmp_path / "memo") == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert len(hashed) == 2


def test_a_memo_that_cannot_be_written_or_read_is_not_used(tmp_path: Path, hashed: list[Path]) -> None:
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"z")
    blocker = tmp_path / "file"
    blocker.write_text("a file, so no folder can be made below it")
    assert memoised_sha256(weights, blocker / "memo") == hashlib.sha256(b"z").hexdigest()
    (tmp_path / "memo").mkdir()
    for memo in (tmp_path / "memo").iterdir():
        memo.unlink()
    memoised_sha256(weights, tmp_path / "memo")
    next((tmp_path / "memo").iterdir()).write_text("{not json")
    assert memoised_sha256(weights, tmp_path / "memo") == hashlib.sha256(b"z").hexdigest()
    assert len(hashed) == 3
