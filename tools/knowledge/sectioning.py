"""A document's sections from its headings, and a title for a document that names none: shared by every
reader (readers.py, html_reader.py), so a heading path means the same whatever format it came from."""

from __future__ import annotations

from pathlib import Path

from .passages import Section


def fallback_title(document_id: str) -> str:
    return Path(document_id).stem.replace("-", " ").replace("_", " ")


def sections_from_headings(text: str, body_start: int, headings: list[tuple[int, int, str]]) -> tuple[Section, ...]:
    """`headings` are (offset, level, title) in order; each section runs to the next heading."""
    sections: list[Section] = []
    if not headings or headings[0][0] > body_start:
        first = headings[0][0] if headings else len(text)
        sections.append(Section(headings=(), start=body_start, end=first))
    stack: list[tuple[int, str]] = []
    for index, (offset, level, title) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = headings[index + 1][0] if index + 1 < len(headings) else len(text)
        sections.append(Section(headings=tuple(t for _, t in stack), start=offset, end=end))
    return tuple(s for s in sections if text[s.start:s.end].strip())
