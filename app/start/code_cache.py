"""attrs' generated methods, compiled once per machine instead of on every start of the command.

attrs writes the source of each class's `__init__`, `__eq__`, `__repr__`, `__hash__`... when the class is
defined and compiles it with `compile()`: for the hexmcp classes defined on the way to `hexmcp stdio`'s
first answer that was a large share of all the work the process did before answering.
The source is a pure function of the class definition and the attrs release, and compiling it always gives
the same code object, so the compiled code can be kept as a .pyc keeps a module's: keyed by the exact
(filename, source) attrs hands over, so an edited class or a new attrs release misses and compiles as
before, and nothing is ever served from a stale entry.

The file: `$HEXMCP_CACHE_DIR/start/attrs-<interpreter cache tag>.marshal` (default `~/.cache/hexmcp`),
the interpreter's bytecode magic number, then one marshalled dict. `HEXMCP_CODE_CACHE=0` turns the cache off.
Never fatal, never trusted blindly: a missing, unreadable, corrupt or foreign-written file (another owner, or
writable by group or others) is ignored and the methods compile as they always did; a cache that cannot be
written is not written.

The fence: the one attrs internal touched is `attr._make._compile_and_eval(script, globs, locs, filename)`,
which every generated method goes through; tests/adapters/test_start_code_cache.py fails if a release moves
or reshapes it. It is replaced only inside `attrs_methods_cached()` blocks (the command's start-up) and
restored on the way out, so classes defined later compile exactly as attrs does it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any, Iterator, Mapping

from hexmcp.tools.cache_dir import untrusted_reason

SWITCH_ENV = "HEXMCP_CODE_CACHE"  # "0": compile every generated method, read and write no file
# Bytecode format of this interpreter: a file written by another one is ignored, never unmarshalled.
MAGIC = importlib.util.MAGIC_NUMBER
# More entries than this (classes edited many times, several trees sharing one cache) and the file is
# rewritten with only what the current start used.
ENTRY_LIMIT = 4096

Key = tuple[str, str]  # (filename, source), as attrs hands them to compile(), salt-free (see salted_key)
Entry = tuple[CodeType, "int | None"]


def cache_file(cache_dir: Path) -> Path:
    return cache_dir / "start" / f"attrs-{sys.implementation.cache_tag}.marshal"


def read_entries(path: Path) -> dict[Key, Entry]:
    """The compiled methods kept in `path`, or none if it is missing, unreadable, corrupt, written by
    another interpreter, owned by another user or writable by anyone but its owner."""
    try:
        with open(path, "rb") as handle:
            status = os.fstat(handle.fileno())
            if status.st_mode & 0o022 or status.st_uid != getattr(os, "getuid", lambda: status.st_uid)():
                return {}
            data = handle.read()
    except OSError:
        return {}
    if not data.startswith(MAGIC):
        return {}
    try:
        table = marshal.loads(memoryview(data)[len(MAGIC):])
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {key: entry for key, entry in table.items()
            if type(key) is tuple and len(key) == 2 and type(key[0]) is str and type(key[1]) is str
            and type(entry) is tuple and len(entry) == 2 and type(entry[0]) is CodeType
            and (entry[1] is None or type(entry[1]) is int)}


def write_entries(path: Path, entries: Mapping[Key, Entry]) -> bool:
    """Replace `path` with `entries` in one rename (readers never see half a file); False if it cannot."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(MAGIC + marshal.dumps(dict(entries)))
        os.replace(temporary, path)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
    return True


def salted_key(filename: str, script: str) -> tuple[Key, int | None]:
    """The cache key of a script, and the salt taken out of it.

    A generated `__hash__` starts from `hash("<attrs generated hash MODULE.CLASS>")`, a literal in its source
    that string hashing's per-process seed changes on every start. Keyed with it, no start would find the
    last one's code; so the literal is keyed as a placeholder, and on a hit put back as this process's value.
    """
    name = filename.removeprefix("<attrs generated methods ")
    if name == filename:
        return (filename, script), None
    base, dash, count = name.removesuffix(">").rpartition("-")
    name = base if dash and count.isdigit() else name.removesuffix(">")  # attrs' "-N" for a name seen before
    salt = hash(f"<attrs generated hash {name}>")
    literal = f" {salt},\n"
    if literal not in script:
        return (filename, script), None
    return (filename, script.replace(literal, " __attrs_type_hash__,\n")), salt


def resalted(code: CodeType, old: int, new: int) -> CodeType:
    """`code` with the integer constant `old` replaced by `new`, in it and in every function it defines."""
    consts = tuple(resalted(const, old, new) if type(const) is CodeType
                   else new if type(const) is int and const == old else const for const in code.co_consts)
    return code.replace(co_consts=consts)


class CodeCache:
    """The compiled methods of one file: looked up by (filename, source), compiled on a miss, and the
    misses written back by `save`. An entry is (code, the salt it was compiled with, or None)."""

    __slots__ = ("path", "known", "used", "compiled", "saved")

    def __init__(self, path: Path, known: dict[Key, Entry]) -> None:
        self.path = path
        self.known = known
        self.used: dict[Key, Entry] = {}  # what this process asked for
        self.compiled = 0  # misses in this process
        self.saved = 0  # misses already written back

    def compile_and_eval(self, script: str, globs: dict[str, Any] | None, locs: Mapping[str, object] | None = None,
                         filename: str = "") -> None:
        """What `attr._make._compile_and_eval` does, with the compile step looked up first."""
        key, salt = salted_key(filename, script)
        entry = self.known.get(key)
        if entry is None:
            entry = self.known[key] = (compile(script, filename, "exec"), salt)
            self.compiled += 1
        self.used[key] = entry
        code, compiled_salt = entry
        if compiled_salt != salt and salt is not None and compiled_salt is not None:
            code = resalted(code, compiled_salt, salt)
        eval(code, globs, locs)

    def save(self) -> None:
        if self.compiled == self.saved:
            return
        entries = self.known if len(self.known) <= ENTRY_LIMIT else self.used
        if write_entries(self.path, entries):
            self.saved = self.compiled


_cache: CodeCache | None = None


def the_cache(cache_dir: Path) -> CodeCache | None:
    """The process's cache in `cache_dir`, read on first use; None when HEXMCP_CODE_CACHE=0."""
    global _cache
    if os.environ.get(SWITCH_ENV, "").strip() == "0":
        return None
    path = cache_file(cache_dir)
    if _cache is None or _cache.path != path:
        if untrusted_reason(cache_dir) is not None:  # neither read nor written; the command says why and exits
            return None
        _cache = CodeCache(path, read_entries(path))
    return _cache


@contextlib.contextmanager
def attrs_methods_cached(cache: CodeCache | None) -> Iterator[CodeCache | None]:
    """Inside the block, attrs classes get their methods from `cache` (None: compiled as usual); on the way
    out attrs compiles as before and what was compiled in the block is written back."""
    if cache is None:
        yield None
        return
    # Imported here, not at the top: the command enters this block with the collector already paused
    # (phase.py), and importing attrs makes thousands of objects.
    import attr._make as attrs_make

    original = getattr(attrs_make, "_compile_and_eval", None)
    if not _hookable(original):  # an attrs release that moved or reshaped it: compile as attrs does
        yield None
        return
    attrs_make._compile_and_eval = cache.compile_and_eval
    try:
        yield cache
    finally:
        attrs_make._compile_and_eval = original
        cache.save()


_PARAMETERS = ("script", "globs", "locs", "filename")


def _hookable(function: Any) -> bool:
    """Whether `function` is the `_compile_and_eval(script, globs, locs, filename)` the cache stands in for.

    Checked at every start, not only by the fence test: an installed attrs newer than the one CI saw must
    never break a start, only lose the cache."""
    code = getattr(function, "__code__", None)
    return code is not None and code.co_argcount == len(_PARAMETERS) and code.co_varnames[:4] == _PARAMETERS
