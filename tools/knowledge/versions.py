"""Which documents are copies of one page: version folders, mirrored formats, identical texts.

Real documentation keeps a page under several version folders (`docs/v1/…`, `2025-06-18/…`,
`versioned_docs/version-29.7/…`, `latest/…`) and in mirrored forms (`a.md` beside `a.mdx`). A result
list made of five copies of one page answers one question five times and hides the other four pages,
so search collapses each page's copies into one result: the preferred copy (the newest released
version unless a preferred label is configured), with the other copies named beside it.

A document's page key is its path with one version segment taken out and its file suffix dropped.
Documents sharing a key are copies only if they also share a title or most of their words, so two
unrelated pages that merely look alike by path (`main/index.md`, `index.md`) stay apart; a lone
document is its own page. Documents whose texts are identical (after whitespace) are copies wherever
they sit. The decision and its figures: docs/adr/0604-distinct-pages-across-versions.md.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import re
from typing import Callable, Iterable, Sequence

import attrs

from .languages import Translations, join_translations, language_of
from .passages import SourceDocument

# A version folder: v2, v1.4, 29.7, 3.5.2, 1.x, version-29.7, release-1.28, 2025-06-18, 2024-11.
_NUMBERED = re.compile(r"^(?:v|version[-_]?|release[-_]?|rel[-_]?)?"
                       r"(?P<number>\d+(?:\.\d+)+(?:\.x)?|\d+\.x|(?<=[vV])\d+|(?<=[-_])\d+)$", re.IGNORECASE)
_DATED = re.compile(r"^(?P<date>\d{4}-\d{2}(?:-\d{2})?)$")
#: Names that stand for the newest release, and for work not yet released (ranked below every release).
RELEASED_ALIASES = frozenset({"latest", "stable", "current"})
UNRELEASED_ALIASES = frozenset({"next", "dev", "devel", "development", "draft", "main", "master", "unreleased",
                                "nightly", "canary", "edge", "preview", "trunk"})
#: Docusaurus keeps old versions in versioned_docs/version-X/ and the unreleased one in docs/.
_DOCUSAURUS_TREE = "versioned_docs"
_VERSIONED_TREES = {_DOCUSAURUS_TREE: "docs"}
_SUFFIX = re.compile(r"\.(?:md|mdx|markdown|rst|txt|pdf|html|htm)$", re.IGNORECASE)


def version_rank(label: str | None) -> tuple[int, tuple[int, ...]]:
    """How new a version label is: unreleased < numbered/dated (by value) < an alias of the newest release.
    A copy without a label ranks as the newest release (a site's root usually is)."""
    if label is None:
        return (2, ())
    name = label.lower()
    if name in RELEASED_ALIASES:
        return (2, ())
    if name in UNRELEASED_ALIASES:
        return (0, ())
    parts = tuple(int(p) for p in re.findall(r"\d+", name))
    return (1, parts)


def version_segment(segment: str) -> bool:
    name = segment.lower()
    return bool(_NUMBERED.match(name) or _DATED.match(name) or name in RELEASED_ALIASES or name in UNRELEASED_ALIASES)


@functools.lru_cache(maxsize=1 << 18)  # every index's catalogue asks it of every id, several times: a re-index too
def split_path(document_id: str) -> tuple[str, str, str | None]:
    """(folders before the version segment, the rest without its file suffix, the version label or None).
    Without a version segment the whole suffix-less path is the rest."""
    parts = document_id.split("/")
    parts[-1] = _SUFFIX.sub("", parts[-1])
    for index, part in enumerate(parts[:-1]):
        if version_segment(part):
            head = parts[:index]
            if head and head[-1] in _VERSIONED_TREES:
                head = [*head[:-1], _VERSIONED_TREES[head[-1]]]
            return "/".join(head), "/".join(parts[index + 1:]), part
    return "", "/".join(parts), None


def page_key(document_id: str) -> str:
    head, rest, _label = split_path(document_id)
    return f"{head}/{rest}" if head else rest


def normalise_label(label: str) -> str:
    """`version-29.7`, `v29.7` and `29.7` name one version; so do `Latest` and `latest`."""
    name = label.strip().lower()
    return re.sub(r"^(?:version[-_]?|release[-_]?|rel[-_]?|v(?=\d))", "", name)


def label_matches(label: str | None, wanted: str) -> bool:
    """Whether a copy's label is the version a client asked for; `29` matches `29.7` and `29.x`."""
    if label is None:
        return False
    have, want = normalise_label(label), normalise_label(wanted)
    return have == want or have.startswith(want + ".") or have.startswith(want + "-")


def path_matches(document_id: str, pattern: str) -> bool:
    """A glob (`*` crosses `/`) when the pattern has one, else a folder or file prefix."""
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(document_id, pattern)
    prefix = pattern.strip("/")
    return document_id == prefix or document_id.startswith(prefix + "/")


@attrs.frozen(kw_only=True)
class Page:
    """One page and its copies: `documents` newest first, the preferred copy first of all."""

    key: str
    documents: tuple[str, ...]
    labels: dict[str, str | None] = attrs.field(eq=False)

    @property
    def preferred(self) -> str:
        return self.documents[0]


class PageCatalog:
    """The corpus's documents grouped into pages; built once per index."""

    def __init__(self, documents: Iterable[SourceDocument], preferred_version: str | None = None,
                 previous: PageCatalog | None = None) -> None:
        """`previous`: an earlier catalogue (a re-index's). Without a versioned copy on either side, only the
        documents that share a path key or a text with a changed one, directly or through others, are grouped
        again (`_update`). Otherwise the grouping is decided afresh over cheap per-document tables, and what
        `previous` worked out from the same document objects is taken from it: their texts' digests, the split of
        a path key's documents into copies, and every page whose members and labels come out the same. Either
        way the catalogue is the one a fresh build makes (tests/tools/knowledge/test_knowledge_versions.py)."""
        documents = list(documents)
        self.preferred_version = preferred_version
        if previous is not None and previous.preferred_version != preferred_version:
            previous = None  # every page's order would differ
        if previous is None or not self._update(documents, previous):
            self._build(documents, previous)

    def _build(self, documents: list[SourceDocument], previous: PageCatalog | None,
               translations: bool = True) -> None:
        """`translations`: look for language folders (languages.py); not in `_update`'s regrouping of a few
        documents, whose mirroring a part of the corpus would misjudge (it bails out where languages matter)."""
        by_id = {d.document_id: d for d in documents}
        labels = {d.document_id: split_path(d.document_id)[2] for d in documents}
        by_key: dict[str, list[str]] = {}
        for document in documents:
            by_key.setdefault(page_key(document.document_id), []).append(document.document_id)
        words = functools.cache(lambda document_id: _words(by_id[document_id]))  # each text read once
        versioned = bool(set(labels.values()) - {None})
        self.translations = Translations(by_id if translations else ())
        # What `_update` needs to find a change's neighbours: kept only without versioned copies or translations
        # (by_key is then still each path key's documents: no unversioned root is attached to versioned copies).
        self._keyed: dict[str, list[str]] | None = None if versioned or self.translations else by_key
        if versioned:
            _attach_unversioned_roots(by_key, labels, words)
        kept = previous._digests if previous is not None else {}
        self._digests: dict[str, tuple[SourceDocument, bytes]] = {}  # each document's whitespace-folded text digest
        for document in documents:
            entry = kept.get(document.document_id)
            self._digests[document.document_id] = entry if entry is not None and entry[0] is document else (
                document, _folded_digest(document))
        groups = self._split_keys(by_key, by_id, words, previous)
        digests = {d: digest for d, (_, digest) in self._digests.items()}
        self._sharing: dict[bytes, list[str]] | None = None  # each text's documents, beside `_keyed`
        if not versioned:
            self._sharing = {}
            for document_id, digest in digests.items():
                self._sharing.setdefault(digest, []).append(document_id)
        if len(set(digests.values())) < len(digests):  # some texts are identical: their groups join
            groups = _join_identical(groups, digests)
        groups = join_translations(groups, self.translations)
        # A version folder is one that holds copies of some page; a page kept in only one version
        # (added late, or dropped) keeps its label when its folder is such a folder.
        versioned_heads = {split_path(d)[0] for members in groups if len(members) > 1
                           for d in members if labels[d] is not None}
        kept_pages = previous._page_of if previous is not None else {}
        self._page_of: dict[str, Page] = {}
        labelled: list[Page] = []  # the pages some copy of which carries a version label
        for members in groups:
            first = members[0]
            if len(members) == 1 and labels[first] is None:  # most pages: one unversioned document, unlabelled
                old = kept_pages.get(first)
                self._page_of[first] = old if old is not None and len(old.documents) == 1 else Page(
                    key=first, documents=(first,), labels={first: None})
                continue
            page = self._page(members, labels, versioned_heads, kept_pages)
            if any(label is not None for label in page.labels.values()):
                labelled.append(page)
            for member in members:
                self._page_of[member] = page
        #: Every version label a copy of some page carries (`version-29.7`, `next`), for naming them to a
        #: client whose version filter matches none. Read per page, not per document: a page of n copies (n empty
        #: files share one text) would be read n times over, n² labels.
        self.version_labels: tuple[str, ...] = tuple(sorted(
            {label for page in labelled for label in page.labels.values() if label is not None},
            key=version_rank, reverse=True))

    def _update(self, documents: list[SourceDocument], previous: PageCatalog) -> bool:
        """This catalogue as `previous` changed by the documents that are new, edited or gone, when neither has a
        versioned copy (then a page is decided by its documents' path keys and texts alone: no version labels,
        no unversioned roots joining versioned copies). The documents to group again are those of a changed
        document's old path key and old page, and every document that shares a path key or a text with one of
        them, transitively; they are grouped as a fresh build groups them, and every other page is the previous
        one. False, with nothing done, where that does not apply or a fresh build is as cheap."""
        if previous._keyed is None or previous._sharing is None:
            return False
        old = previous._digests
        changed = [d for d in documents if old.get(d.document_id, _UNKNOWN)[0] is not d]
        if len(changed) > max(16, len(documents) // 10) or any(split_path(d.document_id)[2] is not None
                                                               or _in_language_folder(d.document_id) for d in changed):
            return False
        removed: list[str] = []
        if len(documents) - len(changed) + sum(d.document_id in old for d in changed) != len(old):
            present = {d.document_id for d in documents}
            removed = [document_id for document_id in old if document_id not in present]
            if any(_in_language_folder(document_id) for document_id in removed):
                return False
        keyed, sharing, digests = dict(previous._keyed), dict(previous._sharing), dict(old)
        seeds: set[str] = set()
        for document_id in removed:
            key, digest = page_key(document_id), old[document_id][1]
            seeds.update(keyed[key], previous._page_of[document_id].documents)
            _drop(keyed, key, document_id)
            _drop(sharing, digest, document_id)
            del digests[document_id]
        for document in changed:
            document_id, key, digest = document.document_id, page_key(document.document_id), _folded_digest(document)
            if document_id in old:  # its path key's documents are reached from it below
                seeds.update(previous._page_of[document_id].documents)
                _drop(sharing, old[document_id][1], document_id)
            else:
                keyed[key] = [*keyed.get(key, ()), document_id]
            sharing[digest] = [*sharing.get(digest, ()), document_id]
            digests[document_id] = (document, digest)
            seeds.add(document_id)
        # Everything that shares a path key or a text with a seed, transitively (each key and text visited once).
        regroup: set[str] = set()
        keys_seen: set[str] = set()
        texts_seen: set[bytes] = set()
        waiting = [d for d in seeds if d in digests]
        while waiting:
            document_id = waiting.pop()
            if document_id in regroup:
                continue
            regroup.add(document_id)
            key, digest = page_key(document_id), digests[document_id][1]
            if key not in keys_seen:
                keys_seen.add(key)
                waiting.extend(keyed[key])
            if digest not in texts_seen:
                texts_seen.add(digest)
                waiting.extend(sharing[digest])
        part = PageCatalog.__new__(PageCatalog)
        part.preferred_version = self.preferred_version
        part._build([digests[d][0] for d in regroup], previous, translations=False)
        self.translations = part.translations  # none: neither catalogue has any, and no change is in such a folder
        self._keyed, self._sharing, self._digests = keyed, sharing, digests
        self._splits = {**previous._splits, **part._splits}  # checked against the documents when used
        self._page_of = dict(previous._page_of)
        for document_id in removed:
            del self._page_of[document_id]
        self._page_of.update(part._page_of)
        self.version_labels = ()
        return True

    def _split_keys(self, by_key: dict[str, list[str]], by_id: dict[str, SourceDocument],
                    words: Callable[[str], frozenset[str]], previous: PageCatalog | None) -> list[list[str]]:
        """Each path key's documents split into groups of real copies (`_similar_groups`). A key whose documents
        are the same objects as in `previous` splits as it did there: the split reads only their titles and
        words, in path order. (No later step depends on the order of groups or of a group's members.)"""
        kept = previous._splits if previous is not None else {}
        old = previous._digests if previous is not None else {}
        self._splits: dict[str, tuple[frozenset[str], list[list[str]]]] = {}  # keys of several documents only
        groups: list[list[str]] = []
        for key, members in by_key.items():
            if len(members) == 1:
                groups.append(members)
                continue
            found, ids = kept.get(key), frozenset(members)
            if found is not None and found[0] == ids and all(old.get(d, _UNKNOWN)[0] is by_id[d] for d in members):
                split = found[1]
            else:
                split = _similar_groups(members, by_id, words)
            self._splits[key] = (ids, split)
            groups.extend(split)
        return groups

    def _page(self, members: list[str], labels: dict[str, str | None], versioned_heads: set[str],
              kept: dict[str, Page]) -> Page:
        """The page of one group; the previous catalogue's own when it had these members under these labels
        (then its order and key are the same too: both follow from members, labels and the preferred version)."""
        page_labels: dict[str, str | None] = {d: labels[d] if split_path(d)[0] in versioned_heads else None
                                              for d in members}
        if len(members) > 1 and any(labels[d] is not None for d in members):
            docusaurus = any(d.split("/", 1)[0] in _VERSIONED_TREES or f"/{_DOCUSAURUS_TREE}/" in d
                             for d in members)
            page_labels = {d: labels[d] if labels[d] is not None else ("next" if docusaurus else None)
                           for d in members}
        old = kept.get(members[0])
        # The same keys: the same members, and so the same order, unless a language's share of the corpus (which
        # decides the main language: languages.py) changed since; pages with translations are ordered afresh.
        if old is not None and old.labels == page_labels and not self.translations:
            return old
        ordered = self._preferred_order(members, page_labels)
        key = page_key(ordered[0]) if len(members) > 1 else ordered[0]
        return Page(key=key, documents=ordered, labels=page_labels)

    def _preferred_order(self, members: list[str], labels: dict[str, str | None]) -> tuple[str, ...]:
        """The corpus's main language first (languages.py), then the configured version, then newest; among
        mirrors of one version the shorter path (.md before .mdx), then by path. Both sorts are stable, so the
        second keeps the first's ties."""
        ordered = sorted(members, key=lambda d: (len(d), d))

        def rank(document_id: str) -> tuple:
            label = labels[document_id]
            configured = self.preferred_version is not None and label_matches(label, self.preferred_version)
            return (-self.translations.rank(document_id), configured, version_rank(label))

        return tuple(sorted(ordered, key=rank, reverse=True))

    def page(self, document_id: str) -> Page:
        found = self._page_of.get(document_id)
        return found if found is not None else Page(key=document_id, documents=(document_id,),
                                                    labels={document_id: None})

    def label(self, document_id: str) -> str | None:
        return self.page(document_id).labels.get(document_id)

    def copies(self, document_id: str) -> tuple[str, ...]:
        """The other copies of this document's page, newest first."""
        return tuple(d for d in self.page(document_id).documents if d != document_id)

    def admits(self, document_id: str, version: str | None, path: str | None) -> bool:
        """Whether a document passes a client's filters. A document outside every version folder passes
        any version filter: it is the same text for every version."""
        if path is not None and not path_matches(document_id, path):
            return False
        label = self.label(document_id)
        return version is None or label is None or label_matches(label, version)

    def knows_version(self, version: str) -> bool:
        """Whether a version filter matches some versioned copy. A corpus without versioned pages knows
        every version: all its pages are the same text for any version, and the filter keeps them all."""
        return not self.version_labels or any(label_matches(label, version) for label in self.version_labels)

    def admitted(self, document_ids: Sequence[str], version: str | None, path: str | None) -> set[str]:
        return {d for d in document_ids if self.admits(d, version, path)}


#: Copies share most of their words; two unrelated pages that merely share a path shape (`main/index.md`
#: and `index.md`) do not. Versioned copies of one page measured 0.6-1.0 on the evaluation corpora.
MIN_SHARED_WORDS = 0.4


def _in_language_folder(document_id: str) -> bool:
    return any(language_of(part) is not None for part in document_id.split("/")[:-1])


def _words(document: SourceDocument) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z0-9]{3,}", document.text[:20000].lower()))


def _attach_unversioned_roots(by_key: dict[str, list[str]], labels: dict[str, str | None],
                              words: Callable[[str], frozenset[str]]) -> None:
    """A page whose copies all sit in version folders may keep its current copy elsewhere: Jest keeps
    `website/versioned_docs/version-29.7/X.md` and the unreleased `docs/X.md`. An unversioned document
    whose path ends with the versioned copies' path after the version folder, and which shares their
    words, joins them (the most similar one, if several would)."""
    # Only the tails some versioned page has are looked for: most corpora have none, or few, beside many pages.
    wanted = {split_path(members[0])[1] for members in by_key.values()
              if all(labels[d] is not None for d in members)}
    if not wanted:
        return
    by_tail: dict[str, list[str]] = {}
    for key, members in by_key.items():
        if len(members) == 1 and labels[members[0]] is None:
            parts = key.split("/")
            for start in range(1, len(parts)):
                tail = "/".join(parts[start:])
                if tail in wanted:
                    by_tail.setdefault(tail, []).append(key)
    for key, members in list(by_key.items()):
        if any(labels[d] is None for d in members) or key not in by_key:
            continue
        rest = split_path(members[0])[1]
        best: tuple[float, str] | None = None
        for candidate in by_tail.get(rest, ()):
            if candidate not in by_key:
                continue
            shared = _shared(words(members[0]), words(by_key[candidate][0]))
            if shared >= MIN_SHARED_WORDS and (best is None or shared > best[0]):
                best = (shared, candidate)
        if best is not None:
            members.extend(by_key.pop(best[1]))


def _shared(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / max(1, len(a | b))


def _similar_groups(members: list[str], by_id: dict[str, SourceDocument],
                    words_of: Callable[[str], frozenset[str]]) -> list[list[str]]:
    """Documents of one path key, split into groups of real copies: a document joins a group when it
    has the title of, or mostly the same words as, any member (versions drift a little at each step)."""
    if len(members) == 1:
        return [members]
    groups: list[list[tuple[str, str]]] = []  # (document id, title); words are read only where titles differ
    for document_id in sorted(members):
        title = by_id[document_id].title.strip().lower()
        for group in groups:
            if any(title == t or _shared(words_of(document_id), words_of(d)) >= MIN_SHARED_WORDS for d, t in group):
                group.append((document_id, title))
                break
        else:
            groups.append([(document_id, title)])
    return [[document_id for document_id, _ in group] for group in groups]


_UNKNOWN = (None, b"")  # what a catalogue holds for a document it does not know: no object, no digest


def _drop(table: dict, key: object, document_id: str) -> None:
    """`table[key]` without `document_id`, as a new list (the previous catalogue's stays as it was)."""
    rest = [d for d in table[key] if d != document_id]
    if rest:
        table[key] = rest
    else:
        del table[key]


def _folded_digest(document: SourceDocument) -> bytes:
    return hashlib.sha256(" ".join(document.text.split()).encode("utf-8")).digest()


def _join_identical(groups: list[list[str]], digests: dict[str, bytes]) -> list[list[str]]:
    """Groups holding documents with identical texts (after whitespace: `digests`) are one page."""
    owner: dict[int, int] = {i: i for i in range(len(groups))}

    def root(i: int) -> int:
        while owner[i] != i:
            i = owner[i]
        return i

    first_with: dict[bytes, int] = {}
    for index, members in enumerate(groups):
        for document_id in members:
            other = first_with.setdefault(digests[document_id], index)
            owner[root(index)] = root(other)
    joined: dict[int, list[str]] = {}
    for index, members in enumerate(groups):
        joined.setdefault(root(index), []).extend(members)
    return list(joined.values())
