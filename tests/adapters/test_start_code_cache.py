"""attrs' generated methods from the compiled code cache (app/start/code_cache.py, ADR 0013): the fence
on attrs' internals, classes identical to the ones attrs compiles itself (also when the cache was written
by a process with another hash seed), and every kind of bad cache file ignored."""

from __future__ import annotations

import inspect
import itertools
import keyword
import marshal
import os
import stat
from pathlib import Path
from typing import Any

import attr._make
import attrs
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hexmcp.app.start import code_cache as start_code_cache
from hexmcp.app.start.code_cache import (MAGIC, SWITCH_ENV, CodeCache, attrs_methods_cached, cache_file, read_entries, salted_key, the_cache)

_names = itertools.count()


def test_the_fence_attrs_compiles_every_generated_method_through_compile_and_eval(tmp_path: Path) -> None:
    """If an attrs release renames, reshapes or bypasses this function, the cache silently stops working:
    this fails instead."""
    original = attr._make._compile_and_eval
    assert list(inspect.signature(original).parameters) == ["script", "globs", "locs", "filename"]
    cache = CodeCache(tmp_path / "attrs.marshal", {})
    with attrs_methods_cached(cache):
        Point = attrs.make_class(f"Point{next(_names)}", ["x", "y"], frozen=True)  # noqa: N806
    assert attr._make._compile_and_eval is original  # restored on the way out
    generated = generated_code(Point)
    assert {"__init__", "__eq__", "__hash__", "__repr__"} <= set(generated)
    assert {code.co_filename for code in generated.values()} == {filename for filename, _ in cache.used}
    assert cache.compiled == len(cache.used) == 1  # one script per class, all of it through the cache


FIELD_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(lambda name: not keyword.iskeyword(name))
DEFAULTS = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.just(attrs.NOTHING))
OPTIONS = st.sampled_from([
    {"frozen": True}, {"frozen": True, "kw_only": True}, {"frozen": True, "cache_hash": True},
    {"frozen": False}, {"frozen": False, "eq": False}, {"frozen": True, "order": True}, {"frozen": True, "slots": False},
    {"frozen": True, "repr": False},
])


def build(fields: list[tuple[str, Any]], options: dict[str, Any], name: str) -> type:
    # Fields with defaults after those without, as attrs requires (kw_only classes would not need it).
    ordered = sorted(fields, key=lambda field: field[1] is not attrs.NOTHING)
    return attrs.make_class(name, {field: attrs.field(default=default) for field, default in ordered}, **options)


def generated_code(cls: type) -> dict[str, Any]:
    return {name: value.__code__ for name, value in vars(cls).items()
            if inspect.isfunction(value) and value.__code__.co_filename.startswith("<attrs generated")}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields=st.lists(st.tuples(FIELD_NAMES, DEFAULTS), min_size=0, max_size=6, unique_by=lambda f: f[0]),
       options=OPTIONS)
def test_a_class_built_from_the_cache_read_back_is_the_class_attrs_builds(tmp_path: Path, fields, options) -> None:
    name = f"Shape{next(_names)}"
    plain = build(fields, options, name)
    path = tmp_path / f"{name}.marshal"
    writing = CodeCache(path, {})
    with attrs_methods_cached(writing):
        build(fields, options, name)
    assert writing.compiled >= 1 and path.exists()
    reading = CodeCache(path, read_entries(path))
    with attrs_methods_cached(reading):
        cached = build(fields, options, name)
    assert reading.compiled == 0  # every method came from the file
    assert generated_code(cached) == generated_code(plain)
    values = {field: index for index, (field, _) in enumerate(fields)}
    one, other = plain(**values), cached(**values)
    if options.get("repr", True):
        assert repr(one) == repr(other)
    if options.get("eq", True):
        assert cached(**values) == other and one != other  # equal within a class, never across two
        if options.get("frozen"):
            assert hash(cached(**values)) == hash(other) and hash(one) == hash(plain(**values))


def test_a_hash_compiled_under_another_hash_seed_gets_this_process_salt(tmp_path: Path) -> None:
    """A start after another one (another PYTHONHASHSEED) finds the methods it compiled and puts its own
    salt into the generated __hash__: the code is what compile() would give in this process."""
    name = f"Salted{next(_names)}"
    plain = attrs.make_class(name, ["a", "b"], frozen=True)
    recording = CodeCache(tmp_path / "recorded.marshal", {})
    with attrs_methods_cached(recording):
        attrs.make_class(name, ["a", "b"], frozen=True)
    [(key, (code, salt))] = recording.used.items()
    assert salt is not None and key == salted_key(*key_with_salt(key, salt))[0]
    filename, _ = key
    other_salt = salt + 12345
    script = key[1].replace("__attrs_type_hash__", str(other_salt))
    stale = CodeCache(tmp_path / "stale.marshal", {key: (compile(script, filename, "exec"), other_salt)})
    with attrs_methods_cached(stale):
        cached = attrs.make_class(name, ["a", "b"], frozen=True)
    assert stale.compiled == 0
    assert generated_code(cached) == generated_code(plain)
    assert other_salt not in generated_code(cached)["__hash__"].co_consts


def key_with_salt(key: tuple[str, str], salt: int) -> tuple[str, str]:
    return key[0], key[1].replace("__attrs_type_hash__", str(salt))


def good_file(tmp_path: Path) -> Path:
    path = tmp_path / "start" / "attrs.marshal"
    cache = CodeCache(path, {})
    with attrs_methods_cached(cache):
        attrs.make_class(f"Kept{next(_names)}", ["x"], frozen=True)
    assert read_entries(path)
    return path


@pytest.mark.parametrize("damage", [
    "missing", "empty", "truncated", "garbage", "another interpreter", "not a dict", "wrong entries",
    "group writable",
])
def test_a_bad_cache_file_is_ignored_and_the_classes_compile_as_usual(tmp_path: Path, damage: str) -> None:
    path = good_file(tmp_path)
    data = path.read_bytes()
    if damage == "missing":
        path.unlink()
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(MAGIC + b"\xff" * 64)
    elif damage == "another interpreter":
        path.write_bytes(b"\x00\x00\r\n" + data[len(MAGIC):])
    elif damage == "not a dict":
        path.write_bytes(MAGIC + marshal.dumps([1, 2, 3]))
    elif damage == "wrong entries":
        path.write_bytes(MAGIC + marshal.dumps({("f", "s"): "not code", "key": (compile("", "f", "exec"), None)}))
    elif damage == "group writable":
        path.chmod(path.stat().st_mode | stat.S_IWGRP)
    assert read_entries(path) == {}
    cache = CodeCache(path, read_entries(path))
    with attrs_methods_cached(cache):
        Fresh = attrs.make_class(f"Fresh{next(_names)}", ["x"], frozen=True)  # noqa: N806
    assert cache.compiled == 1 and Fresh(x=1) == Fresh(x=1)


def test_a_cache_that_cannot_be_written_is_not_written(tmp_path: Path) -> None:
    blocker = tmp_path / "a file, not a directory"
    blocker.write_text("")
    cache = CodeCache(blocker / "start" / "attrs.marshal", {})
    with attrs_methods_cached(cache):
        Made = attrs.make_class(f"Unwritten{next(_names)}", ["x"])  # noqa: N806
    assert Made(x=2).x == 2 and cache.saved == 0
    assert sorted(os.listdir(tmp_path)) == ["a file, not a directory"]


def test_the_switch_turns_the_cache_off_and_the_file_is_named_for_the_interpreter(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(start_code_cache, "_cache", None)
    monkeypatch.setenv(SWITCH_ENV, "0")
    assert the_cache(tmp_path) is None
    monkeypatch.delenv(SWITCH_ENV)
    cache = the_cache(tmp_path)
    assert cache is not None and cache.path == cache_file(tmp_path)
    assert cache.path.parent == tmp_path / "start" and cache_file(tmp_path).name.endswith(".marshal")


@pytest.mark.parametrize("replacement", ["missing", "reshaped"])
def test_an_attrs_without_the_hook_point_starts_without_the_cache(tmp_path: Path, monkeypatch, replacement: str) -> None:
    """A user's attrs may be newer than CI's: a moved or reshaped `_compile_and_eval` loses the cache, never
    a start."""
    if replacement == "missing":
        monkeypatch.delattr(attr._make, "_compile_and_eval")
    else:
        original = attr._make._compile_and_eval

        def reshaped(source: str, globs: dict, locs: Any = None, filename: str = "", extra: int = 0) -> None:
            original(source, globs, locs, filename)

        monkeypatch.setattr(attr._make, "_compile_and_eval", reshaped)
    cache = CodeCache(tmp_path / "attrs.marshal", {})
    with attrs_methods_cached(cache) as used:
        assert used is None
    assert cache.compiled == 0 and not (tmp_path / "attrs.marshal").exists()
    if replacement == "reshaped":
        Made = attrs.make_class(f"Reshaped{next(_names)}", ["x"], frozen=True)  # noqa: N806
        assert Made(x=1) == Made(x=1)
