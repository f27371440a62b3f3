"""Whether a `.txt` file is reStructuredText: Sphinx projects (Django, for one) keep their reST sources
as `.txt`, and read as plain text such a page loses its title, its sections and its heading paths.

The file's opening (`SNIFF_LINES` lines) decides, on markup that prose does not write by accident:
- a section title: a text line under a rule of one adornment character at least as long as the text
  (and over a matching rule, if overlined), standing apart (a blank line or the file's start before it,
  a blank line or the file's end after it);
- a directive or a hyperlink target (`.. note::`, `.. _label:`) opening a line;
- two or more interpreted-text roles (:ref:`...`, :class:`...`).
A rule between blank lines (a plain-text separator), or a dashed line under a table row that is
not a whole line's underline, says nothing.
"""

from __future__ import annotations

import re

SNIFF_LINES = 200
ROLES_NEEDED = 2

# reST allows any non-alphanumeric printable ASCII character as an adornment; these are the ones
# used in practice (docutils' recommended set).
ADORNMENT_CHARACTER = r"[=\-`:'\"~^_*+#<>.]"
_ADORNMENT = re.compile(rf"({ADORNMENT_CHARACTER})\1{{2,}}[ \t]*")
_EXPLICIT = re.compile(r"\.\.[ \t]+(?:[A-Za-z][\w.:+-]*::(?:[ \t]|$)|_[^:\n]+:(?:[ \t]|$)|\|[^|\n]+\|[ \t]+[\w-]+::)")
_ROLE = re.compile(r"(?<![\w`:]):[A-Za-z][\w.+-]*(?::[A-Za-z][\w.+-]*)?:`[^`\n]+`(?!\w)")


def looks_like_rst(text: str) -> bool:
    lines = text.splitlines()[:SNIFF_LINES]
    if any(_EXPLICIT.match(line) for line in lines):
        return True
    if any(_is_title(lines, index) for index in range(len(lines) - 1)):
        return True
    return len(_ROLE.findall("\n".join(lines))) >= ROLES_NEEDED


def _blank(lines: list[str], index: int) -> bool:
    """Outside the file counts as blank: a title may open or close it."""
    return index < 0 or index >= len(lines) or not lines[index].strip()


def _is_title(lines: list[str], index: int) -> bool:
    """Whether lines[index] is a title's text, underlined (and perhaps overlined)."""
    line = lines[index]
    title = line.strip()
    if not title or line[:1].isspace() or _ADORNMENT.fullmatch(line):
        return False
    under = _ADORNMENT.fullmatch(lines[index + 1])
    if under is None or len(lines[index + 1].rstrip()) < len(title) or not _blank(lines, index + 2):
        return False
    over = _ADORNMENT.fullmatch(lines[index - 1]) if index > 0 else None
    if over is not None:
        return over.group(1) == under.group(1) and _blank(lines, index - 2)
    return _blank(lines, index - 1)
