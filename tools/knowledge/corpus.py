"""Which files make the corpus, and reading them: `--docs` roots walked recursively, filtered by
include/exclude globs, or, without roots, hexmcp's own documentation as installed.

A document's id is its path relative to the root it was found under (POSIX separators), so ids are
the same on every machine; a root that is a single file contributes that file's name.
Glob patterns (fnmatch) match that relative path; `*` also crosses `/`. Files that the root's `.gitignore`
files (and its repository's `.git/info/exclude`) ignore are left out unless `gitignore` is off (gitignore.py).
A symlink under a root is
followed only when it resolves inside that root (a link leading out is logged and skipped).
"""

from __future__ import annotations

import collections
import fnmatch
import hashlib
import importlib
import os
import threading
from pathlib import Path
from typing import Callable, Iterator

import attrs
import structlog

from .errors import CorpusError
from .gitignore import IgnoreRules
from .passages import SourceDocument
from .readers import SUFFIXES, parse_file, parse_text, read_file_bytes

log = structlog.get_logger(__name__)

DEFAULT_EXCLUDE = (".*", "*/.*", "node_modules/*", "*/node_modules/*")
BUNDLED_README = "README.md"
BUNDLED_ADR_DIR = "docs/adr"


def _tuple(value: object) -> tuple[str, ...]:
    return tuple(value or ())  # type: ignore[arg-type]


@attrs.frozen(kw_only=True)
class CorpusSpec:
    roots: tuple[Path, ...] = attrs.field(default=(), converter=lambda v: tuple(Path(p) for p in v))
    include: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    exclude: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    gitignore: bool = True  # honour the roots' .gitignore files (--docs-no-gitignore turns it off)

    @property
    def bundled(self) -> bool:
        return not self.roots

    def accepts(self, relative: str) -> bool:
        if not relative.lower().endswith(SUFFIXES):
            return False
        if any(fnmatch.fnmatch(relative, pattern) for pattern in (*DEFAULT_EXCLUDE, *self.exclude)):
            return False
        return not self.include or any(fnmatch.fnmatch(relative, pattern) for pattern in self.include)


@attrs.frozen(kw_only=True)
class CorpusFile:
    document_id: str
    path: Path


def discover(spec: CorpusSpec) -> list[CorpusFile]:
    """The corpus's files, sorted by id. Raises CorpusError for a missing root or a duplicate id."""
    if spec.bundled:
        return bundled_files()
    found: dict[str, CorpusFile] = {}
    for root in spec.roots:
        if not root.exists():
            raise CorpusError(f"documents path {root}: no such file or directory")
        for item in _walk(root, spec):
            if item.document_id in found and found[item.document_id].path != item.path:
                raise CorpusError(f"two files have the document id {item.document_id!r}: "
                                  f"{found[item.document_id].path} and {item.path}; give their common parent as --docs")
            found[item.document_id] = item
    return [found[key] for key in sorted(found)]


def _walk(root: Path, spec: CorpusSpec) -> Iterator[CorpusFile]:
    if root.is_file():
        if root.suffix.lower() in SUFFIXES:
            yield CorpusFile(document_id=root.name, path=root)
        return
    inside = root.resolve()
    rules = IgnoreRules(root) if spec.gitignore else None
    for path in _entries(root, rules):
        found = corpus_file(root, inside, path, spec, rules)
        if found is not None:
            yield found


def corpus_file(root: Path, inside: Path, path: Path, spec: CorpusSpec, rules: IgnoreRules | None) -> CorpusFile | None:
    """`path` (an entry under the folder `root`, whose resolved form is `inside`) as a file of the corpus, or
    None when the corpus does not take it. A folder's entries are walked by `_entries`, which has already left
    out hidden, node_modules and ignored folders on the way down."""
    relative = path.relative_to(root).as_posix()
    if path.is_symlink() and not _within(path, inside):
        # A link to /etc/passwd or to $HOME dropped into a docs folder must not put that file in the
        # index, in search answers and at /docs/<id>: what is served is what lies under the root.
        target = os.path.realpath(path)
        if Path(target).is_relative_to(inside):  # inside, but nothing there: a loop or a missing target
            log.warning("skipping a symlink that leads nowhere (a loop or a missing target)", path=relative,
                        root=str(root))
        else:
            log.warning("skipping a symlink that leads out of the corpus root", path=relative, root=str(root),
                        target=target)
        return None
    if path.is_file() and spec.accepts(relative) and _within(path, inside):  # no way out through a parent
        if rules is not None and rules.ignored(relative, is_dir=False):
            return None
        return CorpusFile(document_id=relative, path=path)
    return None


def _entries(root: Path, rules: IgnoreRules | None, start: Path | None = None) -> list[Path]:
    """Every file and folder under `root` (symlinks listed, not followed, as `rglob` does), sorted, without
    entering a folder whose files the corpus never takes: a hidden one or node_modules (DEFAULT_EXCLUDE leaves
    out everything under them) and one the `.gitignore` rules ignore. A checkout's `.git`, virtualenv or
    node_modules can hold far more files than its documentation. `start`: a folder under `root` to walk
    instead of all of it (a folder a change batch names, corpus_reader.py)."""
    found: list[Path] = []
    for folder, folders, files in os.walk(start or root):
        base = Path(folder)
        entered = []
        for name in folders:
            path = base / name
            if name.startswith(".") or name == "node_modules" or (
                    rules is not None and rules.ignored(path.relative_to(root).as_posix(), is_dir=True)):
                continue
            entered.append(name)
            found.append(path)
        folders[:] = entered
        found.extend(base / name for name in files)
    return sorted(found)


def entered(relative_folder: str, rules: IgnoreRules | None) -> bool:
    """Whether the walk enters a folder (relative to its root): none of its folders, itself included, is
    hidden, node_modules or ignored. What `_entries` decides on the way down, for one folder."""
    parts = relative_folder.split("/")
    if any(name.startswith(".") or name == "node_modules" for name in parts):
        return False
    return rules is None or not rules.ignored(relative_folder, is_dir=True)


def _within(path: Path, inside: Path) -> bool:
    try:
        return path.resolve().is_relative_to(inside)
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13): nowhere to read
        return False


def bundled_files() -> list[CorpusFile]:
    """The ADRs, package data of `hexmcp.docs` (see setup.py); the README is read from metadata."""
    docs = importlib.import_module("hexmcp.docs")
    found: dict[str, CorpusFile] = {}
    # A namespace package's path may name a folder twice, or an installed and an editable copy:
    # the first copy of each ADR wins.
    for base in (Path(entry) for entry in docs.__path__):
        adr = base / "adr"
        for path in sorted(adr.glob("*.md")) if adr.is_dir() else ():
            found.setdefault(path.name, CorpusFile(document_id=f"{BUNDLED_ADR_DIR}/{path.name}", path=path))
    return [found[name] for name in sorted(found)]


def bundled_readme() -> SourceDocument | None:
    # The README ships as the distribution's long description: the one copy pip already installs.
    # importlib.metadata (and the email parser it reads metadata with) is imported here, in the index
    # build, not on `hexmcp stdio`'s way to the initialize answer.
    import importlib.metadata

    try:
        metadata = importlib.metadata.metadata("hexmcp")
    except importlib.metadata.PackageNotFoundError:
        return None
    text = metadata.get_payload() or metadata.get("Description") or ""  # type: ignore[attr-defined]
    return parse_text(BUNDLED_README, str(text), ".md") if str(text).strip() else None


@attrs.frozen(kw_only=True)
class SkippedFile:
    """A file of the corpus that could not be read, and why: what /health names."""

    document_id: str
    reason: str


def load_documents(spec: CorpusSpec, skipped: list[SkippedFile] | None = None) -> list[SourceDocument]:
    """Every readable document of the corpus; an unreadable file is skipped and added to `skipped`. A file
    whose bytes are those it had at the spec's last load is not parsed again (ParsedFiles), and one skipped
    then for the same reason is not logged again: a watched corpus is read on every change, and its one
    binary file would otherwise be warned about on each."""
    documents: list[SourceDocument] = []
    if spec.bundled:
        readme = bundled_readme()
        documents.extend([readme] if readme else [])
    parsed = _PARSED.of(spec)
    kept: dict[tuple[str, bytes], SourceDocument | SkippedFile] = {}
    for item in discover(spec):
        key, outcome = read_corpus_file(item, parsed.get)
        kept[key] = outcome
        if not isinstance(outcome, SkippedFile):
            documents.append(outcome)
        elif skipped is not None:
            skipped.append(outcome)
    _PARSED.keep(spec, kept)
    return documents


ReadKey = tuple[str, bytes]  # (document id, digest of the file's bytes; empty for a file that could not be read)


def read_corpus_file(item: CorpusFile, known: Callable[[ReadKey], SourceDocument | SkippedFile | None]
                     ) -> tuple[ReadKey, SourceDocument | SkippedFile]:
    """One file read: its key and its document, or why it is skipped. `known` gives what the same bytes were
    read into before (not parsed again), and a file skipped before for the same reason is not logged again."""
    key = (item.document_id, b"")  # a file that cannot be read has no digest
    try:
        _check_name(item.document_id)
        data = read_file_bytes(item.document_id, item.path)
        key = (item.document_id, hashlib.sha256(data).digest())
        outcome = known(key) or parse_file(item.document_id, item.path.suffix.lower(), data)
    except Exception as error:  # noqa: BLE001 - third-party parsers (pypdf, docutils) raise anything
        # on malformed input; one bad file must not take the corpus, or the server, down with it.
        outcome = SkippedFile(document_id=printable_name(item.document_id), reason=str(error)[:200])
        if known(key) != outcome:
            log.warning("skipping unreadable document", document=outcome.document_id, error=outcome.reason)
    return key, outcome


def _check_name(document_id: str) -> None:
    """A file name that is not UTF-8 (a Latin-1 name from an old archive) reaches Python with its bad bytes as
    lone surrogates, which no passage id, JSON answer or URI can carry: it took the whole build down."""
    try:
        document_id.encode("utf-8")
    except UnicodeEncodeError:
        raise CorpusError(f"{printable_name(document_id)}: the file name is not UTF-8; not read") from None


def printable_name(document_id: str) -> str:
    """`document_id` with the bytes of a name that is not UTF-8 written as \\xNN escapes."""
    return os.fsencode(document_id).decode("utf-8", errors="backslashreplace")


class ParsedFiles:
    """The documents each recent corpus spec was last read into, or why a file was skipped, by (id, digest of
    the file's bytes; empty for a file that could not be read).
    Parsing is what reading costs (docutils took 9.7 CPU seconds over Django's 273 pages; hashing their
    bytes is milliseconds), and a watched corpus is re-read whole on every change."""

    def __init__(self, specs: int) -> None:
        self._specs = specs
        self._by_spec: collections.OrderedDict[CorpusSpec, dict[tuple[str, bytes], SourceDocument | SkippedFile]] = \
            collections.OrderedDict()
        self._lock = threading.Lock()  # loads run in worker threads

    def of(self, spec: CorpusSpec) -> dict[tuple[str, bytes], SourceDocument | SkippedFile]:
        with self._lock:
            return dict(self._by_spec.get(spec, {}))

    def keep(self, spec: CorpusSpec, documents: dict[tuple[str, bytes], SourceDocument | SkippedFile]) -> None:
        with self._lock:
            self._by_spec[spec] = documents
            self._by_spec.move_to_end(spec)
            while len(self._by_spec) > self._specs:
                self._by_spec.popitem(last=False)


_PARSED = ParsedFiles(specs=4)
