"""Section titles a plain-text document still shows: a document indexed as plain text has passages with
no heading path, yet may have titles, as a line over (and perhaps under) a rule of one punctuation
character at least as long as the line. (reStructuredText in .txt files, as Django keeps it, is read as
reST by the knowledge pack since ADR 0606, so its passages carry heading paths and this is not needed.)
"""

from __future__ import annotations

import re
from typing import Iterator

import attrs

_RULE_CHARS = "=-~^\"'`#*+:._"
_RULE = re.compile(r"^([%s])\1{2,}[ \t]*$" % re.escape(_RULE_CHARS))


@attrs.frozen(kw_only=True)
class PlainTitle:
    text: str
    start: int  # offsets of the title's own line
    end: int
    body: int  # where the text under it starts (past the rule and blank lines)


def plain_titles(text: str) -> Iterator[PlainTitle]:
    """Every underlined (or over- and underlined) title, in order."""
    lines: list[tuple[int, int, str]] = []  # (start, end without the line break, text)
    offset = 0
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        lines.append((offset, offset + len(line), line))
        offset += len(raw)
    for index in range(1, len(lines) - 1):
        start, end, line = lines[index]
        title = line.strip()
        if not title or _RULE.match(line) or line[:1].isspace():
            continue
        below = lines[index + 1][2]
        if not _RULE.match(below) or len(below.rstrip()) < len(title):
            continue
        above = lines[index - 1][2]
        if _RULE.match(above) and above.strip()[0] != below.strip()[0]:
            continue  # an overline must match its underline
        body = lines[index + 1][1]
        while body < len(text) and text[body] in " \t\r\n":
            body += 1
        yield PlainTitle(text=title, start=start, end=end, body=min(body, max(len(text) - 1, 0)))
