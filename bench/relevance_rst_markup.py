"""Lever: reStructuredText markup cleaned out of what is embedded and indexed, measured with bench.relevance.

    python -m bench.relevance_rst_markup [bench.relevance's options, e.g. --set django]

A passage is an exact slice of its source, so a reST page's passages carry roles (:setting:`MIDDLEWARE`),
directive and target lines (`.. versionadded:: 5.1`, `.. _label:`), adornment rows and `::` markers,
as Markdown passages carry links and admonition fences. Here, for passages of `.txt` and `.rst` documents
only, `indexed_text()` (what both retrievers see; the anchors too) is cleaned: a role keeps its text
(`:doc:`Title <path>`` → Title), literals lose their backquotes, target lines and adornment rows go, a
directive keeps its argument and options their values. The vectors get their own cache keys. The figures
and the decision: bench/diaries/knowledge.md, docs/adr/0606-documentation-as-written-rest-txt-and-html.md.
"""

from __future__ import annotations

import re
import sys

_ROLE = re.compile(r":(?:[A-Za-z][\w.+-]*:)?[A-Za-z][\w.+-]*:`([^`]+)`")
_EXPLICIT_TITLE = re.compile(r"^(.*?)\s*<[^<>]+>$", re.DOTALL)
_LITERAL = re.compile(r"``([^`]+)``")
_LINK = re.compile(r"`([^`<]+?)\s*<[^`>]+>`__?")
_INTERPRETED = re.compile(r"`([^`]+)`_{0,2}")
_TARGET_LINE = re.compile(r"^\.\. _[^:\n]+:[ \t]*$\n?", re.MULTILINE)
_DIRECTIVE = re.compile(r"^\.\. [A-Za-z][\w:.+-]*::[ \t]*", re.MULTILINE)
_OPTION = re.compile(r"^[ \t]+:[\w -]+:[ \t]*", re.MULTILINE)
_ADORNMENT = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1{2,}[ \t]*$\n?", re.MULTILINE)
_LITERAL_MARKER = re.compile(r"(?<=\S)::[ \t]*$", re.MULTILINE)
_BARE_LITERAL_MARKER = re.compile(r"^[ \t]*::[ \t]*$\n?", re.MULTILINE)


def _role_text(match: re.Match[str]) -> str:
    content = match.group(1)
    titled = _EXPLICIT_TITLE.match(content)
    return (titled.group(1) if titled else content).lstrip("~!")


def clean_rst(text: str) -> str:
    for pattern, replacement in ((_TARGET_LINE, ""), (_OPTION, ""), (_DIRECTIVE, ""), (_ADORNMENT, ""),
                                 (_ROLE, _role_text), (_LITERAL, r"\1"), (_LINK, r"\1"), (_INTERPRETED, r"\1"),
                                 (_BARE_LITERAL_MARKER, ""), (_LITERAL_MARKER, ":")):
        text = pattern.sub(replacement, text)  # type: ignore[arg-type]
    return text


def _rest(passage: object) -> bool:
    return str(getattr(passage, "document_id", "")).endswith((".txt", ".rst"))


def main(argv: list[str] | None = None) -> int:
    import attrs

    from hexmcp.tools.knowledge import builder, indexing, windows
    from hexmcp.tools.knowledge.passages import Passage

    from . import relevance

    builder.CHUNKING_VERSION += "+rst-markup-cleaned-2"  # type: ignore[misc]  # never the served vectors' keys
    indexed_text = Passage.indexed_text
    Passage.indexed_text = lambda self: (  # type: ignore[method-assign]
        clean_rst(indexed_text(self)) if _rest(self) else indexed_text(self))
    cut = windows.passage_windows

    def cleaned_windows(passage: Passage, *args: object, **kwargs: object) -> list[str]:
        # windows.py cuts a long passage's body from passage.text and takes indexed_text() to be the context
        # in front of it: both must be the cleaned text, or further windows would embed the raw markup.
        return cut(attrs.evolve(passage, text=clean_rst(passage.text)) if _rest(passage) else passage,
                   *args, **kwargs)  # type: ignore[arg-type]

    builder.passage_windows = indexing.passage_windows = cleaned_windows  # type: ignore[assignment]
    return relevance.main(argv)


if __name__ == "__main__":
    sys.exit(main())
