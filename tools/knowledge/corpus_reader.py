"""The corpus as last read, kept so that a batch of file changes re-reads only the paths it names.

A watched corpus used to be read whole on every change: listing, reading and hashing 100,000 files cost
about 12 s of CPU per saved page (bench/diaries/hostile_probes.md). Here a change batch's paths are read
again and nothing else: a file that changed is read (parsed only if its bytes differ), a folder that
appeared is walked, and whatever the corpus held at or below a path that is gone is dropped. What a path
holds is decided exactly as the full walk decides it (corpus.py: `entered` for its folders, `corpus_file`
for the file), so the documents are those a full read would give.

Some changes are not local to their path, and they are read whole: a `.gitignore` or `.git/info/exclude`
(which may add or drop documents anywhere below), a root itself, a path outside every root, a root that
is a single file, and the bundled documentation. So is the first read, and any read after the watcher
lost events (a restart, a root deleted and made again): the service asks for `read_all` then, once the
new watch is armed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from .corpus import (CorpusFile, CorpusSpec, ReadKey, SkippedFile, _entries, corpus_file, entered,
                     load_documents, read_corpus_file)
from .errors import CorpusError
from .gitignore import IgnoreRules, is_rule_file
from .passages import SourceDocument


Outcome = tuple[ReadKey, SourceDocument | SkippedFile]


class CorpusReader:
    """Reads the corpus of one spec, whole or by changed paths; `documents` and `skipped` are in id order."""

    def __init__(self, spec: CorpusSpec) -> None:
        self.spec = spec
        self.documents: dict[str, SourceDocument] = {}
        self.skipped: list[SkippedFile] = []
        self._roots = [(root, Path(os.path.abspath(root)), root.resolve()) for root in spec.roots]
        self._incremental = False  # whether a change batch may be read by its paths (after a whole read)
        self._files: list[dict[str, CorpusFile]] = []  # per root, as discover lists them
        self._read: list[dict[str, Outcome]] = []  # per root, by document id
        self._folders: list[set[str]] = []  # per root: the folders that held its files (a superset is harmless)
        self._links: dict[str, set[tuple[int, str]]] = {}  # a linked file's real path: (root, document) read through it
        self._rules: list[IgnoreRules | None] = []

    def read_all(self) -> None:
        """Read the whole corpus again (files whose bytes did not change are not parsed again)."""
        self._incremental = False
        if self.spec.bundled or any(not root.is_dir() for root in self.spec.roots):
            skipped: list[SkippedFile] = []
            self.documents = {d.document_id: d for d in load_documents(self.spec, skipped)}
            self.skipped = skipped
            return
        for root in self.spec.roots:
            if not root.exists():
                raise CorpusError(f"documents path {root}: no such file or directory")
        previous = self._read or [{} for _ in self.spec.roots]
        self._rules = [IgnoreRules(root) if self.spec.gitignore else None for root in self.spec.roots]
        self._files = [{} for _ in self.spec.roots]
        self._read = [{} for _ in self.spec.roots]
        self._folders = [set() for _ in self.spec.roots]
        self._links = {}
        for number, (root, _, inside) in enumerate(self._roots):
            for entry in _entries(root, self._rules[number]):
                item = corpus_file(root, inside, entry, self.spec, self._rules[number])
                if item is not None:
                    self._add(number, item, previous[number])
        if len(self._files) > 1:
            _refuse_duplicates(self._files)
        self._publish()
        self._incremental = True

    def read_changed(self, paths: Iterable[str]) -> bool:
        """Re-read what the changed `paths` (absolute, as the watcher reports them) hold now; False, with
        nothing read, when the batch is one to read whole (the module's docstring says which)."""
        if not self._incremental:
            return False
        scopes: list[set[str]] = [set() for _ in self.spec.roots]
        for path in paths:
            found = self._under_roots(path)
            if not found or any(not relative or is_rule_file(relative) for _, relative in found):
                return False
            for number, relative in found:
                scopes[number].add(relative)
            for number, linked in self._links.get(os.path.realpath(path), ()):  # a link's target changed
                scopes[number].add(linked)
        self._incremental = False  # until this read completes: one that fails midway leaves nothing to trust
        previous = [dict(read) for read in self._read]
        for number, relative_paths in enumerate(scopes):
            for relative in _outermost(relative_paths):
                self._replace(number, relative, previous[number])
        if len(self._files) > 1:
            _refuse_duplicates(self._files)
        self._publish()
        self._incremental = True
        return True

    def _replace(self, number: int, relative: str, previous: dict[str, Outcome]) -> None:
        """What root `number` holds at `relative` (a file, a folder's files, or nothing) replaces what it held."""
        root, _, inside = self._roots[number]
        files = self._files[number]
        gone = [relative] if relative in files else []
        if relative in self._folders[number]:
            prefix = relative + "/"
            gone.extend(document_id for document_id in files if document_id.startswith(prefix))
        for document_id in gone:
            item = files.pop(document_id)
            self._read[number].pop(document_id, None)
            linked = self._links.get(os.path.realpath(item.path))
            if linked is not None:
                linked.discard((number, document_id))
        rules = self._rules[number]
        parent = relative.rsplit("/", 1)[0] if "/" in relative else ""
        if parent and not entered(parent, rules):
            return
        path = root / relative
        if path.is_dir() and not path.is_symlink():  # os.walk does not follow a linked folder either
            if not entered(relative, rules):
                return
            if rules is not None:
                rules.forget(relative)
            found = [item for entry in _entries(root, rules, start=path)
                     if (item := corpus_file(root, inside, entry, self.spec, rules)) is not None]
        else:
            item = corpus_file(root, inside, path, self.spec, rules) if os.path.lexists(path) else None
            found = [item] if item is not None else []
        for item in found:
            self._add(number, item, previous)

    def _add(self, number: int, item: CorpusFile, previous: dict[str, Outcome]) -> None:
        before = previous.get(item.document_id)
        self._files[number][item.document_id] = item
        self._read[number][item.document_id] = read_corpus_file(
            item, lambda key: before[1] if before is not None and before[0] == key else None)
        folder, folders = item.document_id, self._folders[number]
        while "/" in folder:
            folder = folder.rsplit("/", 1)[0]
            if folder in folders:
                break
            folders.add(folder)
        if item.path.is_symlink():
            self._links.setdefault(os.path.realpath(item.path), set()).add((number, item.document_id))

    def _publish(self) -> None:
        """`documents` and `skipped` from what each root holds, in id order; the first root holding an id
        gives it (two roots hold one only as the same file)."""
        outcomes: dict[str, SourceDocument | SkippedFile] = {}
        for read in self._read:
            for document_id, (_, outcome) in read.items():
                outcomes.setdefault(document_id, outcome)
        documents: dict[str, SourceDocument] = {}
        skipped: list[SkippedFile] = []
        for document_id in sorted(outcomes):
            outcome = outcomes[document_id]
            if isinstance(outcome, SkippedFile):
                skipped.append(outcome)
            else:
                documents[document_id] = outcome
        self.documents, self.skipped = documents, skipped

    def _under_roots(self, path: str) -> list[tuple[int, str]]:
        """Each root `path` lies under, with the path relative to it ("" for the root itself)."""
        changed = Path(path)
        found = []
        for number, (_, *forms) in enumerate(self._roots):
            for form in forms:
                if changed.is_relative_to(form):
                    relative = changed.relative_to(form).as_posix()
                    found.append((number, "" if relative == "." else relative))
                    break
        return found


def _refuse_duplicates(roots: list[dict[str, CorpusFile]]) -> None:
    """Two roots holding one id as different files is refused, as `discover` refuses it."""
    seen: dict[str, CorpusFile] = {}
    for files in roots:
        for document_id, item in files.items():
            other = seen.setdefault(document_id, item)
            if other.path != item.path:
                raise CorpusError(f"two files have the document id {document_id!r}: {other.path} and "
                                  f"{item.path}; give their common parent as --docs")


def _outermost(paths: set[str]) -> list[str]:
    """The paths not inside another of them: a folder re-read covers everything below it."""
    return sorted(path for path in paths
                  if not any(path[:cut] in paths for cut in range(len(path)) if path[cut] == "/"))
