"""The knowledge base's value objects: a source document, a section of it, and a passage.

A passage is the unit that gets indexed and cited. Its id is a pure function of the document's
corpus-relative path, its heading path and its ordinal under that heading, so the same file gives
the same ids on every run and every machine (no absolute paths, no timestamps, no random seeds).
"""

from __future__ import annotations

import hashlib
import re

import attrs

ID_PREFIX = "p-"
#: A line that is only heading markup: a Markdown heading, or a reST title's under- or overline.
_HEADING_MARKUP = re.compile(r"#{1,6}(?:\s.*)?|([=\-~^\"'`#*+:.])\1{2,}")


@attrs.frozen(kw_only=True)
class Section:
    """A run of a document's text under one heading path; offsets index the source text."""

    headings: tuple[str, ...]
    start: int
    end: int


@attrs.frozen(kw_only=True)
class SourceDocument:
    """One file of the corpus, read and split into sections.

    `document_id` is the corpus-relative POSIX path (e.g. `guide/install.md`); `text` is the
    decoded source (for PDF, the extracted text), which passage offsets index into."""

    document_id: str
    title: str
    text: str
    media_type: str
    sections: tuple[Section, ...]
    metadata: dict[str, str] = attrs.field(factory=dict, eq=False)


@attrs.frozen(kw_only=True)
class Passage:
    passage_id: str
    document_id: str
    title: str  # the document's title
    headings: tuple[str, ...]
    start: int  # character offsets into SourceDocument.text
    end: int
    text: str
    #: What the retrievers read of the body in place of `text`, when the format's markup is cleaned out of
    #: it (reST: rst_markup.py; MDX: markdown_markup.py); None: `text` itself. `text` stays the exact source
    #: slice that is cited.
    indexed_body: str | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def heading_path(self) -> str:
        return " > ".join(self.headings)

    def only_heading(self) -> bool:
        """Whether the passage holds nothing but its section's heading: a section whose text all sits in
        its subsections. It still ranks (its heading names the topic), but fetched it says nothing."""
        names = {*self.headings, self.title}
        return all(not line or line in names or _HEADING_MARKUP.fullmatch(line)
                   for line in (raw.strip() for raw in self.text.splitlines()))

    def body_text(self) -> str:
        """The body as the retrievers read it (windows.py cuts long ones from it)."""
        return self.text if self.indexed_body is None else self.indexed_body

    def indexed_text(self) -> str:
        """What both retrievers see: the document title and heading path carry the topic words a
        passage's body often leaves implicit ("Consequences" means nothing without its ADR)."""
        context = " > ".join(h for h in (self.title, *self.headings) if h)
        body = self.body_text()
        return f"{context}\n\n{body}" if context else body


def passage_id(document_id: str, headings: tuple[str, ...], ordinal: int) -> str:
    digest = hashlib.sha256()
    for part in (document_id, *headings):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x1f")
    digest.update(str(ordinal).encode("ascii"))
    return ID_PREFIX + digest.hexdigest()[:20]
