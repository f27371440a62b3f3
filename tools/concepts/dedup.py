"""Evidence → concept drafts: one draft per set of surface forms that name the same thing.

Two sightings name the same concept when their keys are equal (alias normalisation, text.key_of) or
equal but for spaces ("InferencePool", "inference pool"), when
one is the other's acronym ("Model Context Protocol (MCP)"), when a glossary entry lists both, or when
the embeddings of their titles are nearly identical and they share a stem (cosine >= MERGE_COSINE:
"e-mail address" and "email address"; "vector store" and "in-process vector store" stay apart). Ids are slugs of the chosen
title, so the same corpus gives the same ids on every build, whatever order it is read in.
"""

from __future__ import annotations

import collections
import hashlib
from typing import Callable, Iterable, Sequence

import attrs
import numpy as np

from .glossary import Glossary, GlossaryEntry
from .model import Evidence, EvidenceKind
from .text import key_of, slug, squashed

MERGE_COSINE = 0.93
GENERIC_HEADING_SHARE = 0.1  # a heading in more than this share of documents (and >= 3) is a template's
MAX_ALIASES = 12
_ORDER = list(EvidenceKind)


@attrs.frozen(kw_only=True)
class Draft:
    id: str
    key: str
    title: str
    aliases: tuple[str, ...]
    evidence: tuple[Evidence, ...]
    glossary: GlossaryEntry | None
    confidence: float
    type: str


def generic_headings(evidence: Sequence[Evidence], documents: int,
                     page_of: Callable[[str], str] | None = None) -> frozenset[str]:
    """Heading keys that most documents share ("Context", "Installation"): a template, not a topic.
    With `page_of`, the copies of one page (other versions) count as one document."""
    page_of = page_of or (lambda document_id: document_id)
    spread: dict[str, set[str]] = collections.defaultdict(set)
    pages = set()
    for item in evidence:
        pages.add(page_of(item.document_id))
        if item.kind is EvidenceKind.HEADING:
            spread[key_of(item.term)].add(page_of(item.document_id))
    limit = max(3, GENERIC_HEADING_SHARE * min(documents, len(pages) or documents))
    return frozenset(key for key, found_in in spread.items() if len(found_in) >= limit)


class _Groups:
    """Union-find over keys."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        self.parent.setdefault(key, key)
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)  # the smaller key leads: independent of input order


def draft_concepts(evidence: Sequence[Evidence], glossary: Glossary, documents: int,
                   embed_titles: Callable[[list[str]], np.ndarray] | None,
                   page_of: Callable[[str], str] | None = None) -> list[Draft]:
    generic = generic_headings(evidence, documents, page_of)
    kept = [e for e in evidence if key_of(e.term) and not (e.kind is EvidenceKind.HEADING and key_of(e.term) in generic)]
    groups = _Groups()
    for item in kept:
        groups.find(key_of(item.term))
        if item.alias and key_of(item.alias):
            groups.union(key_of(item.term), key_of(item.alias))
    joined: dict[str, str] = {}
    for item in sorted(kept, key=lambda e: key_of(e.term)):  # "InferencePool", "inference pool", "snapshotSerializers"
        form = squashed(item.term)
        groups.union(joined.setdefault(form[:-1] if form.endswith("s") and len(form) > 4 else form,
                                       key_of(item.term)), key_of(item.term))
    glossary_of: dict[str, GlossaryEntry] = {}
    for entry in glossary.entries:
        keys = [k for k in (key_of(entry.title), key_of(entry.id.replace("-", " ")), *map(key_of, entry.aliases)) if k]
        for key in keys:
            groups.union(keys[0], key)
        glossary_of[keys[0]] = entry
    members: dict[str, list[Evidence]] = collections.defaultdict(list)
    for item in kept:
        members[groups.find(key_of(item.term))].append(item)
    glossary_by_root = {groups.find(k): entry for k, entry in glossary_of.items()}
    roots = sorted(set(members) | set(glossary_by_root))
    if embed_titles is not None and len(roots) > 1:
        _merge_similar(roots, members, glossary_by_root, groups, embed_titles)
        merged: dict[str, list[Evidence]] = collections.defaultdict(list)
        for root, items in members.items():
            merged[groups.find(root)].extend(items)
        members = merged
        glossary_by_root = {groups.find(k): entry for k, entry in glossary_by_root.items()}
        roots = sorted(set(members) | set(glossary_by_root))
    drafts = [_draft(root, members.get(root, []), glossary_by_root.get(root)) for root in roots]
    return _with_unique_ids(drafts)


def _title_of(items: Sequence[Evidence]) -> str:
    """The surface form of the most trusted evidence kind, the most frequent one, then the shortest."""
    best_kind = min((_ORDER.index(e.kind) for e in items), default=0)
    forms = collections.Counter(e.term for e in items if _ORDER.index(e.kind) == best_kind)
    return min(forms, key=lambda form: (-forms[form], form.islower(), len(form), form))


def _merge_similar(roots: list[str], members: dict[str, list[Evidence]], glossary: dict[str, GlossaryEntry],
                   groups: _Groups, embed_titles: Callable[[list[str]], np.ndarray]) -> None:
    titles = [glossary[r].title if r in glossary else _title_of(members[r]) for r in roots]
    vectors = embed_titles(titles)
    stems = [set(root.split()) for root in roots]
    for block in range(0, len(roots), 1024):
        similarity = vectors[block:block + 1024] @ vectors.T
        for row, column in zip(*np.nonzero(similarity >= MERGE_COSINE)):
            i = block + int(row)
            j = int(column)
            # A shared stem too: MiniLM puts unfamiliar tokens (code names, product names) close together.
            if i < j and not (roots[i] in glossary and roots[j] in glossary) and stems[i] & stems[j]:
                groups.union(roots[i], roots[j])


def _noisy_or(items: Iterable[Evidence]) -> float:
    strongest: dict[tuple[EvidenceKind, str], float] = {}
    for item in items:  # one vote per kind and document: a phrase repeated in one file is one sighting
        slot = (item.kind, item.document_id)
        strongest[slot] = max(strongest.get(slot, 0.0), item.kind.prior * item.weight)
    doubt = 1.0
    for value in strongest.values():
        doubt *= 1.0 - value
    return round(min(1.0 - doubt, 0.99), 4)


def _draft(root: str, items: list[Evidence], entry: GlossaryEntry | None) -> Draft:
    items = sorted(items, key=lambda e: (_ORDER.index(e.kind), e.document_id, e.start, e.term))
    title = entry.title if entry else _title_of(items)
    forms: dict[str, str] = {}
    for form in [*(entry.aliases if entry else ()), *(e.term for e in items), *(e.alias for e in items if e.alias)]:
        if form.lower() != title.lower():
            forms.setdefault(form.lower(), form)
    aliases = tuple(sorted(forms.values(), key=lambda f: (len(f), f)))[:MAX_ALIASES]
    kind = entry.type if entry else items[0].kind.value
    return Draft(id=entry.id if entry else slug(title), key=root, title=title, aliases=aliases, evidence=tuple(items),
                 glossary=entry, confidence=1.0 if entry else _noisy_or(items), type=kind)


def _with_unique_ids(drafts: list[Draft]) -> list[Draft]:
    """Two titles with one slug ("C++" and "C") get a suffix from their keys, so neither depends on the other."""
    taken = collections.Counter(d.id for d in drafts)
    reserved = {d.id for d in drafts if d.glossary is not None}
    unique = []
    for draft in drafts:
        if taken[draft.id] > 1 and draft.glossary is None and (draft.id in reserved or taken[draft.id] > 1):
            draft = attrs.evolve(draft, id=f"{draft.id}-{hashlib.sha256(draft.key.encode()).hexdigest()[:6]}")
        unique.append(draft)
    return sorted(unique, key=lambda d: d.id)
