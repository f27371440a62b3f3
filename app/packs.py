"""The installed tool packs: every `hexmcp.packs` entry point, hexmcp's own included, in composition order.

Scanning the environment's entry points (importing importlib.metadata, then reading every
distribution's metadata) is a large part of `hexmcp stdio`'s start. The scan's result is kept in
`$HEXMCP_CACHE_DIR/start/packs-<interpreter>-<sys.path digest>.json` (one file per environment sharing
the cache directory), keyed by the modification time of every folder on sys.path: installing or removing
a distribution rewrites its folder, so any change rescans. A missing, stale, foreign or corrupt file only
means scanning as before; `HEXMCP_CODE_CACHE=0` turns it off too. Each scan that writes a file keeps the
newest `KEPT_ENVIRONMENTS` of them and deletes the rest, so a cache directory that has seen many sys.paths
(throwaway virtual environments, test runs) stays small; an environment whose file went scans once more.
"""

from __future__ import annotations

import binascii  # loaded by the start already: its crc32 names a sys.path, at no import cost
import importlib
import os
import sys
from pathlib import Path
from typing import Any

import orjson

from hexmcp.core.pack import ENTRY_POINT_GROUP, Pack, PackProblem
from hexmcp.tools.cache_dir import default_cache_dir

Entry = tuple[str, str]  # (name, "module:Class")

KEPT_ENVIRONMENTS = 16


_installed: list[Pack] | None = None


def installed_packs() -> list[Pack]:
    """One instance of each installed pack, found once per process, ordered so that a pack comes after
    those offering the ports it needs or uses."""
    global _installed
    if _installed is None:
        _installed = in_order([_load(name, target) for name, target in _entries(default_cache_dir())])
    return _installed


def in_order(packs: list[Pack]) -> list[Pack]:
    """Packs by `order`, then moved after any pack offering a port they need or use (a stable
    topological order: offering packs are found by declared `needs`/`uses` against `offers`)."""
    pending = sorted(packs, key=lambda pack: (pack.order, pack.name))
    placed: list[Pack] = []
    while pending:
        for pack in pending:
            wanted = set(pack.needs) | set(pack.uses)
            if not any(wanted & set(other.offers) for other in pending if other is not pack):
                break
        else:
            pack = pending[0]  # a cycle of ports: keep the declared order
        pending.remove(pack)
        placed.append(pack)
    return placed


def _load(name: str, target: str) -> Pack:
    module_name, _, attribute = target.partition(":")
    try:
        pack_class = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise PackProblem(f"the tool pack {name!r} ({target}) cannot be loaded: {error}") from error
    if not (isinstance(pack_class, type) and issubclass(pack_class, Pack)):
        raise PackProblem(f"the tool pack {name!r} ({target}) is not a hexmcp.Pack subclass")
    return pack_class()


def _entries(cache_dir: Path) -> list[Entry]:
    if os.environ.get("HEXMCP_CODE_CACHE", "").strip() == "0":
        return _scan()
    key = _environment_key()
    path = cache_dir / "start" / f"packs-{sys.implementation.cache_tag}-{_environment_name(key)}.json"
    cached = _read(path, key)
    if cached is not None:
        return cached
    entries = _scan()
    _write(path, key, entries)
    return entries


def _scan() -> list[Entry]:
    from importlib.metadata import entry_points

    found: dict[str, str] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(entry.name, entry.value)  # the first on sys.path wins, as for imports
    return sorted(found.items())


def _environment_key() -> list[Any]:
    """Each sys.path folder's modification time; not the working directory's (first on sys.path for
    `python -c` and `-m`), which changes with every file written there and holds no installed packs."""
    key: list[Any] = []
    here = os.getcwd()
    for folder in sys.path:
        if not folder or folder == here:
            continue
        try:
            key.append([folder, os.stat(folder).st_mtime_ns])
        except OSError:
            key.append([folder, None])
    return key


def _environment_name(key: list[Any]) -> str:
    """A name for the sys.path folders `key` covers. Environments sharing a cache directory (two virtual
    environments of one Python, a PYTHONPATH, a test runner's own sys.path) each keep their own file: with
    one file per interpreter they overwrote each other's, and each start after the other's scanned again."""
    return format(binascii.crc32("\0".join(folder for folder, _ in key).encode()), "08x")


def _read(path: Path, key: list[Any]) -> list[Entry] | None:
    try:
        with open(path, "rb") as handle:
            status = os.fstat(handle.fileno())
            if status.st_mode & 0o022 or status.st_uid != os.getuid():
                return None
            data = orjson.loads(handle.read())
        if data["key"] != key:
            return None
        return [(str(name), str(target)) for name, target in data["entries"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write(path: Path, key: list[Any], entries: list[Entry]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(orjson.dumps({"key": key, "entries": entries}))
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
        _prune(path.parent)
    except OSError:
        pass  # an unwritable cache only means scanning again next time


def _prune(folder: Path) -> None:
    """Delete all but the newest `KEPT_ENVIRONMENTS` scan files (by modification time)."""
    aged = []
    for file in folder.glob("packs-*.json"):
        try:
            aged.append((file.stat().st_mtime_ns, file))
        except OSError:
            continue  # deleted meanwhile by another process's prune
    for _, file in sorted(aged, reverse=True)[KEPT_ENVIRONMENTS:]:
        file.unlink(missing_ok=True)
