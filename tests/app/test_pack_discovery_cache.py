"""The pack discovery cache (app/packs.py) is kept per sys.path: environments sharing a cache directory
(two virtual environments of one Python, a PYTHONPATH, a test runner's own sys.path) keep their own scan.
With one file per interpreter each overwrote the other's, so every start after the other's scanned again
(importing importlib.metadata before stdio's initialize answer: tests/adapters/test_cli_startup.py saw it when
the test process, its sys.path longer by a test folder, composed the server in the same cache directory)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from hexmcp.app import packs


def test_two_environments_sharing_a_cache_directory_each_scan_once(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    scans: list[list[str]] = []
    scan = packs._scan

    def counted() -> list[packs.Entry]:
        scans.append(list(sys.path))
        return scan()

    monkeypatch.setattr(packs, "_scan", counted)
    monkeypatch.delenv("HEXMCP_CODE_CACHE", raising=False)
    extra = tmp_path / "on-pythonpath"
    extra.mkdir()
    environments = {"plain": list(sys.path), "with a PYTHONPATH": [str(extra), *sys.path]}
    found: dict[str, list[list[packs.Entry]]] = {}
    for name in ("plain", "with a PYTHONPATH", "plain", "with a PYTHONPATH"):  # starts taking turns
        monkeypatch.setattr(sys, "path", environments[name])
        found.setdefault(name, []).append(packs._entries(tmp_path / "cache"))
    assert [path[0] == str(extra) for path in scans] == [False, True]  # one scan per environment, no more
    assert all(first == again and first for first, again in found.values())


def test_a_cache_directory_keeps_the_newest_environments_only(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Throwaway environments (a venv per CI run, a test runner's sys.path) do not pile up scan files."""
    monkeypatch.delenv("HEXMCP_CODE_CACHE", raising=False)
    monkeypatch.setattr(packs, "_scan", lambda: [("knowledge", "some.module:Pack")])
    cache = tmp_path / "cache"
    written: list[Path] = []
    for number in range(packs.KEPT_ENVIRONMENTS + 5):
        folder = tmp_path / f"environment-{number}"
        folder.mkdir()
        monkeypatch.setattr(sys, "path", [str(folder)])
        before = set((cache / "start").glob("packs-*.json"))
        packs._entries(cache)
        (new,) = set((cache / "start").glob("packs-*.json")) - before
        os.utime(new, (1_000_000 + number, 1_000_000 + number))  # ages one second apart, all in the past
        written.append(new)
    assert set((cache / "start").glob("packs-*.json")) == set(written[-packs.KEPT_ENVIRONMENTS:])
