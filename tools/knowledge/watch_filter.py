"""Which file changes under the --docs roots the watcher acts on: those the corpus could contain. A change
inside a folder that `.gitignore` leaves out (a Sphinx build rewriting `_build/`, `pip install` into a
virtualenv) re-reads nothing; a change to a `.gitignore` (or `.git/info/exclude`) itself is acted on and
makes the rules be read again, since it may add or remove documents."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .gitignore import IgnoreRules, is_rule_file


class CorpusChangeFilter:
    """A watchfiles `watch_filter`: watchfiles' default filter (editor swap files, `.git`, caches), plus
    the roots' ignore rules."""

    def __init__(self, roots: tuple[Path, ...]) -> None:
        from watchfiles import DefaultFilter

        self._default = DefaultFilter()
        self._roots = [(root, Path(os.path.abspath(root)), root.resolve()) for root in roots if root.is_dir()]
        self._rules: dict[Path, IgnoreRules] = {}

    def __call__(self, change: Any, path: str) -> bool:
        found = self._under_root(path)
        if found is None:
            return bool(self._default(change, path))
        root, relative = found
        if is_rule_file(relative):
            self._rules.pop(root, None)  # read again on the next question
            return True
        if not self._default(change, path):
            return False
        rules = self._rules.get(root)
        if rules is None:
            rules = self._rules[root] = IgnoreRules(root)
        return not rules.ignored(relative, is_dir=os.path.isdir(path))

    def _under_root(self, path: str) -> tuple[Path, str] | None:
        changed = Path(path)
        for root, *forms in self._roots:
            for form in forms:
                if changed.is_relative_to(form):
                    return root, changed.relative_to(form).as_posix()
        return None
