"""Which documents are translations of one page: sibling language folders that mirror each other.

Documentation sites keep translations beside the source text under one folder per language
(`content/en/docs/…`, `content/zh-cn/docs/…`, `docs/ja/…`, `i18n/fr/…`). Searched in English, a corpus
with its translations fills a result list with them: code blocks, commands and field names are the same in
every language, so the Chinese copy of a page matches an English question nearly as well as the English one
(on Kubernetes' pages with three translations, 153 of 430 top-5 slots). A page's translations are therefore
its copies, as its versions are (versions.py), and the copy in the corpus's main language answers for it.

Translations share neither a title nor their words, so they are recognised by structure alone: a folder
whose name is a language tag counts only where a sibling folder is another language and the two mirror
each other's files (most of the smaller one's paths are also in the other). Two unrelated folders that
happen to be named like languages (`ml/` and `io/`) share an `index.md`, not their tree.
"""

from __future__ import annotations

import collections
import functools
import re
from typing import Iterable

#: Languages documentation is commonly translated into (ISO 639-1), with or without a region or script
#: (`zh-cn`, `pt_BR`, `zh-hans`). Rare codes are left out: `io`, `ml`, `os` and the like name folders of
#: their own far more often than Ido, Malayalam or Ossetian translations.
_LANGUAGES = frozenset("""
    en zh ja ko fr de es pt it ru uk pl nl sv no nb nn da fi is tr ar he fa hi bn ur ta te mr gu kn pa
    id ms vi th km lo my cs sk hu ro bg el sr hr bs sl mk sq et lv lt ca eu gl cy ga az kk uz ka hy mn
    sw am ne si tl
""".split())
_TAG = re.compile(r"^(?P<language>[a-z]{2})(?:[-_](?:[a-z]{2}|hans|hant|latn|cyrl|\d{3}))?$")
#: Share of the smaller language folder's paths the other must also hold for the two to be translations.
MIN_MIRRORED = 0.5
#: And at least this many paths in common: two folders of one page each mirror nothing.
MIN_MIRRORED_PATHS = 3


@functools.lru_cache(maxsize=4096)  # asked of every folder of every document, at each build of a catalogue
def language_of(segment: str) -> str | None:
    """The language a folder name tags (`zh-CN` -> `zh-cn`), or None."""
    name = segment.lower()
    match = _TAG.match(name)
    return name.replace("_", "-") if match and match["language"] in _LANGUAGES else None


class Translations:
    """The corpus's language folders: for each document in one, the path that names its page in every
    language (the document id without its language folder) and its language."""

    def __init__(self, document_ids: Iterable[str]) -> None:
        # the folders above a language folder -> language -> the paths below it
        trees: dict[str, dict[str, set[str]]] = collections.defaultdict(lambda: collections.defaultdict(set))
        placed: dict[str, tuple[str, str, str]] = {}  # document -> (folders above, language, path below)
        for document_id in document_ids:
            parts = document_id.split("/")
            for index, part in enumerate(parts[:-1]):
                language = language_of(part)
                if language is not None:
                    head, rest = "/".join(parts[:index]), "/".join(parts[index + 1:])
                    trees[head][language].add(rest)
                    placed[document_id] = (head, language, rest)
                    break  # the outermost language folder: `en/docs/fr/…` is English about French
        self._languages: dict[str, tuple[str, ...]] = {}  # head -> its mirrored languages, main language first
        for head, languages in trees.items():
            mirrored = _mirrored(languages)
            if len(mirrored) > 1:
                self._languages[head] = mirrored
        #: document -> (its page's language-free id, its language), for documents in a mirrored language folder
        self.of: dict[str, tuple[str, str]] = {}
        self._rank: dict[str, int] = {}
        for document_id, (head, language, rest) in placed.items():
            if language in self._languages.get(head, ()):
                self.of[document_id] = (f"{head}/{rest}" if head else rest, language)
                self._rank[document_id] = self._languages[head].index(language)

    def __bool__(self) -> bool:
        return bool(self.of)

    def in_main_language(self, document_id: str) -> bool:
        """A copy in its language folders' main language (not: a document outside every language folder)."""
        return self._rank.get(document_id) == 0

    def rank(self, document_id: str) -> int:
        """0 for a copy in its folder's main language (the one with the most documents), then 1, 2, … in that
        order; 0 too for a document outside every language folder."""
        return self._rank.get(document_id, 0)


def _mirrored(languages: dict[str, set[str]]) -> tuple[str, ...]:
    """The languages under one folder that mirror the main one's tree, main first: by documents held, English
    first on a tie, then by tag."""
    main, *others = sorted(languages, key=lambda tag: (-len(languages[tag]), tag != "en", tag))
    return (main, *(tag for tag in others
                    if len(languages[tag] & languages[main]) >= max(MIN_MIRRORED_PATHS,
                                                                  MIN_MIRRORED * len(languages[tag]))))


def join_translations(groups: list[list[str]], translations: Translations) -> list[list[str]]:
    """Groups holding translations of one page (the same language-free id), directly or through others, are
    one page."""
    if not translations:
        return groups
    owner = list(range(len(groups)))

    def root(i: int) -> int:
        while owner[i] != i:
            owner[i] = owner[owner[i]]
            i = owner[i]
        return i

    first_with: dict[str, int] = {}
    for index, members in enumerate(groups):
        for document_id in members:
            found = translations.of.get(document_id)
            if found is not None:
                owner[root(index)] = root(first_with.setdefault(found[0], index))
    joined: dict[int, list[str]] = {}
    for index, members in enumerate(groups):
        joined.setdefault(root(index), []).extend(members)
    return list(joined.values())
