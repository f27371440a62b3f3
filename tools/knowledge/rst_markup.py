"""reStructuredText markup cleaned from what the retrievers read of a reST passage (its passage text stays the
exact source slice that `fetch` and citations show).

A role keeps its text (:doc:`Title <path>` → Title, :setting:`MIDDLEWARE` → MIDDLEWARE), literals and
interpreted text lose their backquotes, hyperlink targets (`.. _label:`) and adornment rows go, a
directive keeps its argument (`.. versionadded:: 5.1` → 5.1) and an option its value, and a `::`
literal marker becomes `:`. On Django's pages this is 9.3 % of the characters indexed; the measurements:
docs/adr/0606-documentation-as-written-rest-txt-and-html.md.
"""

from __future__ import annotations

import re

from .rst_sniffing import ADORNMENT_CHARACTER

_ROLE = re.compile(r":(?:[A-Za-z][\w.+-]*:)?[A-Za-z][\w.+-]*:`([^`]+)`")
_EXPLICIT_TITLE = re.compile(r"^(.*?)\s*<[^<>]+>$", re.DOTALL)
_LITERAL = re.compile(r"``([^`]+)``")
_LINK = re.compile(r"`([^`<]+?)\s*<[^`>]+>`__?")
_INTERPRETED = re.compile(r"`([^`]+)`_{0,2}")
_TARGET_LINE = re.compile(r"^\.\. _[^:\n]+:[ \t]*$\n?", re.MULTILINE)
_DIRECTIVE = re.compile(r"^\.\. [A-Za-z][\w:.+-]*::[ \t]*", re.MULTILINE)
_OPTION = re.compile(r"^[ \t]+:[\w -]+:[ \t]*", re.MULTILINE)
_ADORNMENT = re.compile(rf"^({ADORNMENT_CHARACTER})\1{{2,}}[ \t]*$\n?", re.MULTILINE)  # a rule's whole line
_LITERAL_MARKER = re.compile(r"(?<=\S)::[ \t]*$", re.MULTILINE)
_BARE_LITERAL_MARKER = re.compile(r"^[ \t]*::[ \t]*$\n?", re.MULTILINE)


def _role_text(match: re.Match[str]) -> str:
    content = match.group(1)
    titled = _EXPLICIT_TITLE.match(content)
    return (titled.group(1) if titled else content).lstrip("~!")


def clean_rst(text: str) -> str:
    """`text` without its reST markup (regular expressions over the source: no parse)."""
    for pattern, replacement in ((_TARGET_LINE, ""), (_OPTION, ""), (_DIRECTIVE, ""), (_ADORNMENT, ""),
                                 (_ROLE, _role_text), (_LITERAL, r"\1"), (_LINK, r"\1"), (_INTERPRETED, r"\1"),
                                 (_BARE_LITERAL_MARKER, ""), (_LITERAL_MARKER, ":")):
        text = pattern.sub(replacement, text)  # type: ignore[arg-type]
    return text
