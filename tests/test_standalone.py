"""The repository stands alone: nothing it tracks points at a sibling folder or one machine's paths.

CI also runs the suite in a fresh clone with no shared folder beside it (`.ci/run`); this test names the
offending file and line at once, on any machine.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# A sibling checkout, or a home/work folder of one particular machine.
MACHINE_PATH = re.compile(r"\.\./shared\b|(?<![\w.])/(?:work|home|root|Users)/[\w.-]+")
TEXT_SUFFIXES = {".py", ".md", ".toml", ".cfg", ".sh", ".yaml", ".yml", ".txt", ".ini", ""}
# Public documentation copied verbatim as evaluation data (bench/data/corpora/*/SOURCE.md): its examples
# name their authors' home folders (a GEOS library under bob's), which the project neither reads nor writes.
THIRD_PARTY = ("bench/data/corpora/",)


def tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in listed.splitlines()
            if Path(name).suffix in TEXT_SUFFIXES and not name.startswith(THIRD_PARTY)]


def test_no_tracked_file_names_a_machine_path() -> None:
    offending = []
    for path in tracked_files():
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if MACHINE_PATH.search(line):
                offending.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not offending, "paths outside the repository (a sibling shared folder or one machine's folders):\n" + "\n".join(offending)


def test_the_data_the_tests_and_benchmarks_read_is_in_the_repository() -> None:
    for version in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"):
        assert (ROOT / "tests" / "data" / "mcp-schema" / version / "schema.json").is_file(), version
    assert (ROOT / "bench" / "data" / "mmlu-pro" / "questions.csv").is_file()
