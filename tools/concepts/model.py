"""The concept layer's value objects: evidence found in a passage, a concept, a citation, an edge.

Scores in this package are all 0..1 and each says what it measures (docs/concepts.md):
- `Concept.confidence`: how sure we are that the concept is a real term of the corpus (noisy-or of
  its evidence's priors: a glossary entry is 1.0, a bold definition 0.85, a heading 0.7 ...).
- `Edge.weight`: how strong the relation is (see relations.py for each kind's formula).
"""

from __future__ import annotations

import enum

import attrs


class EvidenceKind(str, enum.Enum):
    """Where a concept was seen, most trusted first; the prior is what one sighting is worth."""

    GLOSSARY = "glossary"  # a --glossary entry
    ENTRY = "entry"  # an entry of a glossary the corpus holds (a Sphinx glossary, a glossary folder's page)
    DEFINITION = "definition"  # "**X** is ...", "X: ..." in a list
    ACRONYM = "acronym"  # "Foo Bar (FB)": the expansion, with the acronym as an alias
    HEADING = "heading"  # a section heading (not one that most documents share)
    LINK = "link"  # the text of a Markdown link to another document
    KEYPHRASE = "keyphrase"  # a YAKE key phrase of the document

    @property
    def prior(self) -> float:
        return _PRIORS[self]


_PRIORS = {EvidenceKind.GLOSSARY: 1.0, EvidenceKind.ENTRY: 0.95, EvidenceKind.DEFINITION: 0.85, EvidenceKind.ACRONYM: 0.85,
           EvidenceKind.HEADING: 0.7, EvidenceKind.LINK: 0.5, EvidenceKind.KEYPHRASE: 0.4}


@attrs.frozen(kw_only=True)
class Evidence:
    """One sighting of a term: its surface form and where it stands in its document's text."""

    term: str
    kind: EvidenceKind
    document_id: str
    passage_id: str
    start: int  # offsets of the term in the document's text
    end: int
    headings: tuple[str, ...] = ()  # the heading path of the passage it was seen in
    alias: str | None = None  # the acronym of an ACRONYM sighting
    target: str | None = None  # the linked document of a LINK sighting
    weight: float = 1.0  # a key phrase's strength (1 for the document's best, falling with rank)
    titles_page: bool = False  # a HEADING that is the document's own title (or file name): the page is about it


@attrs.frozen(kw_only=True)
class Citation:
    """Where a statement comes from: a span of one document's text, in one version of the index."""

    document_id: str
    passage_id: str
    start: int
    end: int
    index_version: str

    def as_item(self) -> dict[str, object]:
        return {"documentId": self.document_id, "path": self.document_id, "passageId": self.passage_id,
                "offsets": {"start": self.start, "end": self.end}, "indexVersion": self.index_version}


@attrs.frozen(kw_only=True)
class Concept:
    id: str
    title: str
    aliases: tuple[str, ...]
    summary: str
    citation: Citation | None  # None only for a glossary summary the corpus does not contain
    type: str  # a glossary entry's type, else the kind of its strongest evidence ("heading", ...)
    confidence: float
    defined_in: tuple[str, ...]  # documents where it is defined (headings, definitions), best first
    sources: tuple[str, ...]  # the evidence kinds it was built from


@attrs.frozen(kw_only=True)
class Edge:
    source: str
    target: str
    relation: str
    weight: float
