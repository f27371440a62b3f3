"""What the knowledge tools answer, as types: each tool's output schema is derived from its return type.

`search` and `fetch` answer in exactly the shapes ChatGPT connectors and deep research read.
"""

# No `from __future__ import annotations`: on Python 3.11 a TypedDict sees a string annotation, not
# NotRequired, and would make every key required.
from typing import Annotated, Any, NotRequired, TypedDict


class CitationMetadata(TypedDict):
    """Where the cited page sits: its path, its version, and its copies in other versions or forms."""

    path: str
    version: NotRequired[str]
    otherVersions: NotRequired[list[str]]


class Citation(TypedDict):
    """One page found by `search`: the id of its best passage (for `fetch`), a title, a URL."""

    id: str
    title: str
    url: str
    metadata: NotRequired[CitationMetadata]


class SearchResults(TypedDict):
    results: list[Citation]


class FetchedText(TypedDict):
    """A passage or a whole document; `metadata` says where the text sits (path, headings, offsets)."""

    id: str
    title: str
    text: str
    url: str
    metadata: dict


class DocumentEntry(TypedDict):
    id: str
    title: str
    uri: str
    url: str
    mimeType: NotRequired[str]


class DocumentPage(TypedDict):
    documents: list[DocumentEntry]
    nextCursor: NotRequired[str]


class Offsets(TypedDict):
    start: int
    end: int


class PassageHit(TypedDict):
    kind: Annotated[Any, {"const": "passage"}]
    documentId: str
    passageId: str
    title: str
    text: str
    score: Annotated[float, {"minimum": 0, "maximum": 1}]
    headingPath: NotRequired[list[str]]
    offsets: Offsets
    version: NotRequired[str]
    otherVersions: NotRequired[list[str]]


class PassageHits(TypedDict):
    items: list[PassageHit]


class IndexSummary(TypedDict):
    """What `indexDocuments` did: documents and passages indexed, passages embedded, how long it took, and
    the version of the index served afterwards (the indexVersion its citations carry)."""

    documents: int
    passages: int
    embedded: int
    seconds: float
    version: NotRequired[str]
