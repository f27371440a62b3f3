"""How strongly a passage defines a concept (0..1): what explainConcept ranks first.

A glossary entry is the surest (ENTRY); then the opening of a page the concept titles (its front-matter
title, first heading or file name: TITLE); then the opening of a section it heads, or a definition
sentence (SECTION, DEFINITION); then an acronym's expansion (ACRONYM). The rest of a page or section a
heading names still defines it, weakly (REST). Each is scaled by the sighting's weight (a heading
split into parts, a file name, an unmarked definition sentence are less sure), and a passage keeps
its strongest.

Copies of one page (version folders, mirrors: the knowledge index's page catalogue) count once: each
passage has a place (page, heading path, ordinal) that its copies share, and a concept's support keeps
one passage per place, the preferred copy's, with the strongest strength and count any copy had.
"""

from __future__ import annotations

import collections
from typing import Mapping, Protocol, Sequence

from hexmcp.tools.ports import KnowledgePassage

from .base import Support
from .dedup import Draft
from .model import EvidenceKind

ENTRY, TITLE, SECTION, DEFINITION, ACRONYM, REST = 1.0, 0.8, 0.65, 0.65, 0.55, 0.3
MIN_OPENING_CHARS = 40  # a passage with less text than this beside its heading lines is the heading alone


class Page(Protocol):
    @property
    def key(self) -> str: ...

    @property
    def documents(self) -> tuple[str, ...]:
        """The page's copies, the preferred one first."""


class PageCatalog(Protocol):
    """Which documents are copies of one page (tools/knowledge/versions.py's PageCatalog)."""

    def page(self, document_id: str) -> Page: ...


def defining_strengths(drafts: Sequence[Draft], passages: Sequence[KnowledgePassage]
                       ) -> dict[str, dict[str, float]]:
    """Per concept, the passages that define it and how strongly."""
    sections: dict[tuple[str, tuple[str, ...]], list[KnowledgePassage]] = collections.defaultdict(list)
    pages: dict[str, list[KnowledgePassage]] = collections.defaultdict(list)
    for passage in passages:  # a section holds its subsections' passages too
        pages[passage.document_id].append(passage)
        for depth in range(len(passage.headings) + 1):
            sections[(passage.document_id, passage.headings[:depth])].append(passage)
    for members in (*sections.values(), *pages.values()):
        members.sort(key=lambda p: p.start)
    strengths: dict[str, dict[str, float]] = collections.defaultdict(dict)
    for draft in drafts:
        found = strengths[draft.id]

        def put(passage_id: str, strength: float) -> None:
            found[passage_id] = round(max(found.get(passage_id, 0.0), strength), 4)

        for item in draft.evidence:
            if item.kind in (EvidenceKind.ENTRY, EvidenceKind.GLOSSARY):
                put(item.passage_id, ENTRY * item.weight)
            elif item.kind is EvidenceKind.DEFINITION:
                put(item.passage_id, DEFINITION * item.weight)
            elif item.kind is EvidenceKind.ACRONYM:
                put(item.passage_id, ACRONYM * item.weight)
            elif item.kind is EvidenceKind.HEADING:
                if item.titles_page:
                    members, strength = pages.get(item.document_id, []), TITLE
                else:
                    members, strength = sections.get((item.document_id, item.headings), []), SECTION
                # A heading found in plain text has no section: it names the passage its text starts in.
                # A passage that is the heading alone explains nothing: the opening is the first with text.
                opening = next((p for p in members if not _heading_only(p)), members[0]) if members else None
                put(opening.passage_id if opening else item.passage_id, strength * item.weight)
                for passage in members:
                    put(passage.passage_id, REST * item.weight)
    return strengths


def _heading_only(passage: KnowledgePassage) -> bool:
    body = [line for line in passage.text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return sum(len(line) for line in body) < MIN_OPENING_CHARS


def places(passages: Sequence[KnowledgePassage], catalog: PageCatalog | None) -> dict[str, tuple]:
    """Where each passage sits in its page, the same for every copy: page key, heading path, ordinal."""
    seen: collections.Counter[tuple] = collections.Counter()
    found = {}
    for passage in passages:
        key = catalog.page(passage.document_id).key if catalog is not None else passage.document_id
        ordinal = seen[(passage.document_id, passage.headings)]
        seen[(passage.document_id, passage.headings)] += 1
        found[passage.passage_id] = (key, passage.headings, ordinal)
    return found


def fold_copies(rows: Sequence[Support], place: Mapping[str, tuple], preference: Mapping[str, int]
                ) -> list[Support]:
    """One row per place: the preferred copy's passage, with the strongest strength and mentions of any copy."""
    groups: dict[tuple, list[Support]] = collections.defaultdict(list)
    for row in rows:
        groups[place.get(row.passage.passage_id, (row.passage.passage_id,))].append(row)
    folded = []
    for members in groups.values():
        chosen = min(members, key=lambda r: (preference.get(r.passage.document_id, 0), r.passage.document_id))
        strength = max(r.strength for r in members)
        folded.append(Support(passage=chosen.passage, mentions=max(r.mentions for r in members),
                              defines=strength > 0, strength=strength))
    return folded
