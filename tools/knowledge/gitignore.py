"""What a docs root's `.gitignore` files leave out of the corpus: build output, virtualenvs, caches and
vendored copies that a repository checkout carries beside its sources (ADR 0609).

git's rules, matched by pathspec's GitIgnoreSpec (git's own flavour of the patterns): a `.gitignore`
applies to its folder and below, with paths relative to that folder; within one file the last matching
pattern wins, a deeper file wins over a shallower one, and `.git/info/exclude` ranks below every
`.gitignore`. A folder that is ignored is not entered, so nothing under it can be re-included by a
negation (git does the same). When the root lies inside a git work tree, the `.gitignore` files of its
parent folders up to the work tree's top count too, as they do for git. The user's global excludes file
(`core.excludesFile`) is not read: the corpus would then differ between two machines for the same checkout.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pathspec

IGNORE_FILE = ".gitignore"
REPOSITORY_EXCLUDE = ".git/info/exclude"


def is_rule_file(relative: str) -> bool:
    """Whether a changed path (relative to a root, POSIX separators) is one the rules are read from."""
    return relative.rsplit("/", 1)[-1] == IGNORE_FILE or relative.endswith(REPOSITORY_EXCLUDE)


class IgnoreRules:
    """The ignore rules of one docs root, read lazily folder by folder and kept until dropped."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._top = _work_tree_top(root)
        # The root's path under the work tree's top ("" when the root is the top or not in a work tree).
        self._prefix = root.resolve().relative_to(self._top).as_posix() if self._top != root.resolve() else ""
        self._specs: dict[str, list[Pattern] | None] = {}
        self._folders: dict[str, bool] = {}  # relative to the root: is this folder ignored (or inside one)
        if self._prefix and self._inside_ignored_folder(self._prefix):
            # The root was asked for although its work tree ignores it (--docs _build/html): the rules
            # above it would leave it empty, so only those at and below the root count.
            self._top, self._prefix, self._specs = root.resolve(), "", {}

    def ignored(self, relative: str, is_dir: bool) -> bool:
        """Whether `relative` (a path under the root, POSIX separators) is ignored, or lies in an ignored
        folder. The root itself is never ignored: it is what was asked for."""
        if not relative or relative == ".":
            return False
        parent = relative.rsplit("/", 1)[0] if "/" in relative else ""
        if parent and self._folder_ignored(parent):
            return True
        return self._matches(relative, is_dir)

    def forget(self, relative_folder: str) -> None:
        """Drop what is known of a folder (relative to the root) and everything below it: it was replaced (moved
        in, deleted and made again), and the `.gitignore` files it holds now may not be those read before."""
        full = f"{self._prefix}/{relative_folder}" if self._prefix else relative_folder
        for known, prefix in ((self._specs, full), (self._folders, relative_folder)):
            for key in [k for k in known if k == prefix or k.startswith(prefix + "/")]:
                del known[key]

    def _folder_ignored(self, relative: str) -> bool:
        known = self._folders.get(relative)
        if known is None:
            parent = relative.rsplit("/", 1)[0] if "/" in relative else ""
            known = (bool(parent) and self._folder_ignored(parent)) or self._matches(relative, True)
            self._folders[relative] = known
        return known

    def _inside_ignored_folder(self, full: str) -> bool:
        parts = full.split("/")
        return any(self._matches_full("/".join(parts[:depth]), True) for depth in range(1, len(parts) + 1))

    def _matches(self, relative: str, is_dir: bool) -> bool:
        return self._matches_full(f"{self._prefix}/{relative}" if self._prefix else relative, is_dir)

    def _matches_full(self, full: str, is_dir: bool) -> bool:
        folders = full.split("/")[:-1]
        # Deepest .gitignore first: the first one with a matching pattern decides.
        for depth in range(len(folders), -1, -1):
            base = "/".join(folders[:depth])
            spec = self._spec(base)
            if spec is None:
                continue
            below = full[len(base) + 1:] if base else full
            decided = _decision(spec, below + "/" if is_dir else below)
            if decided is not None:
                return decided
        exclude = self._spec(REPOSITORY_EXCLUDE)
        return bool(exclude is not None and _decision(exclude, full + "/" if is_dir else full))

    def _spec(self, base: str) -> list[Pattern] | None:
        if base not in self._specs:
            name = REPOSITORY_EXCLUDE if base == REPOSITORY_EXCLUDE else f"{base}/{IGNORE_FILE}" if base else IGNORE_FILE
            self._specs[base] = _read_spec(self._top / name)
        return self._specs[base]


# One pattern of a rule file: (ignores: True, re-includes: False), pathspec's regular expression for it
# required to end where the path ends, and whether it is a `dir/**` pattern (which names what is inside).
Pattern = tuple[bool, "re.Pattern[str]", bool]


def _decision(patterns: list[Pattern], path: str) -> bool | None:
    """What the last pattern naming `path` itself (a folder's path ends with "/") says: True ignored, False
    re-included, None no pattern names it. pathspec answers for a flat list of files, so its folder pattern
    `build/` also matches `build/a.md` (its regex stops at the folder); here folders are decided on the way
    down (IgnoreRules.ignored), and a pattern that names only a parent folder must not decide for what is
    inside it, or `!build/` would re-include a file that another rule ignores: so the regex must reach the
    end of the path."""
    for ignores, regex, inside_only in reversed(patterns):
        match = regex.search(path)
        if match is None or (inside_only and path.endswith("/") and match.end() == len(path)):
            continue  # `a/**` names everything inside `a`, not `a` itself: `!a/keep.md` can still apply
        return ignores
    return None


def _read_spec(path: Path) -> list[Pattern] | None:
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:  # none there (the usual case), or a folder named .gitignore: no rules
        return None
    patterns: list[Pattern] = []
    for pattern in pathspec.GitIgnoreSpec.from_lines(text.splitlines()).patterns:
        if pattern.include is None or pattern.regex is None:
            continue  # a blank line or a comment
        regex = pattern.regex
        if "ps_d" in regex.groupindex:  # a pattern that may name a file or a folder: anchor its end
            patterns.append((bool(pattern.include), re.compile(f"(?:{regex.pattern})\\Z"), False))
        else:  # `dir/**` (a prefix) and `*`/`**` (anything)
            patterns.append((bool(pattern.include), regex, True))
    return patterns or None


def _work_tree_top(root: Path) -> Path:
    """The folder holding `.git` at or above the root (a folder, or the file a linked work tree has);
    the root itself when there is none: its own `.gitignore` files still apply."""
    resolved = root.resolve()
    for folder in (resolved, *resolved.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return resolved
