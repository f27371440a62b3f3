"""Glossaries the corpus holds itself, as ENTRY evidence: the surest sign of where a term is defined.

Three shapes, told apart by how they are written, not by any corpus's words:
- a Sphinx `.. glossary::` block (in any .rst or .txt page): its terms are the lines indented once under
  the directive, each definition the lines indented deeper below it;
- a glossary folder (a path segment named glossary, glossaries or terminology) where every page is one
  entry, titled by its front matter or first heading (Hugo's `reference/glossary/*.md`);
- a glossary file (named glossary.*) written in Markdown: each of its headings is an entry, and so is
  each term of a definition list ("Term" over ": its definition") or a list item led by a bold term.
A glossary folder's page may list other names in its front matter's `aka`: they are aliases.

A title such as "RBAC (Role-Based Access Control)" gives the term and, from the parentheses, an alias.
(Not to be confused with glossary.py: the curated --glossary file merged over the derived concepts.)
"""

from __future__ import annotations

import posixpath
import re
from typing import Callable, Iterable, Sequence

from hexmcp.tools.ports import KnowledgeDocument, KnowledgePassage

from .model import Evidence, EvidenceKind
from .text import clean_term, plausible_term

GLOSSARY_NAMES = frozenset({"glossary", "glossaries", "terminology"})
_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\. glossary::[ \t]*$", re.MULTILINE)
_OPTION = re.compile(r"^\s*:[\w-]+:")  # `:sorted:` and the like, under the directive
_TITLE_ALIAS = re.compile(r"^(?P<term>[^()]+?)\s*\((?P<alias>[^()]{2,60})\)\s*$")
_DEFINITION_LIST = re.compile(r"^(?P<term>[^\s:#>|*-][^\n]{0,60})\n(?=:[ \t]+\S)", re.MULTILINE)
_BOLD_ITEM = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*|__)(?P<term>[^*_\n]{2,60})(?:\*\*|__)", re.MULTILINE)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?P<body>.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)
_ROLE = re.compile(r":[\w:.-]+:`(?P<text>[^`<]*?)\s*(?:<[^>]*>)?`")  # :term:`view <v>` reads "view"


PassageAt = Callable[[int], KnowledgePassage]


def glossary_entries(document: KnowledgeDocument, passages: Sequence[KnowledgePassage],
                     passage_at: PassageAt) -> Iterable[Evidence]:
    """Every glossary entry in `document`; `passage_at` gives the passage holding a document offset."""
    yield from _sphinx_entries(document, passage_at)
    parts = document.document_id.lower().split("/")
    stem = posixpath.splitext(parts[-1])[0]
    if any(part in GLOSSARY_NAMES for part in parts[:-1]) and stem not in ("_index", "index", "readme"):
        yield from _page_entry(document, passages[0])
    elif stem in GLOSSARY_NAMES:
        yield from _heading_entries(document, passages)
        yield from _listed_entries(document, passage_at)


def named_term(title: str) -> tuple[str, str | None] | None:
    """(term, alias) a title names: "RBAC (Role-Based Access Control)" → ("RBAC", "Role-Based Access Control")."""
    text = _ROLE.sub(lambda m: m.group("text"), title).strip()
    alias = None
    found = _TITLE_ALIAS.match(text)
    if found:
        text, alias = found.group("term"), clean_term(found.group("alias"))
        alias = alias if plausible_term(alias) else None
    term = clean_term(text)
    return (term, alias) if plausible_term(term) else None


def _entry(term: str, alias: str | None, passage: KnowledgePassage, start: int, end: int) -> Evidence:
    return Evidence(term=term, kind=EvidenceKind.ENTRY, document_id=passage.document_id,
                    passage_id=passage.passage_id, start=start, end=end, headings=passage.headings, alias=alias)


def _sphinx_entries(document: KnowledgeDocument, passage_at: PassageAt) -> Iterable[Evidence]:
    text = document.text
    for directive in _DIRECTIVE.finditer(text):
        base = len(directive.group("indent").expandtabs())
        term_indent: int | None = None
        cursor = directive.end() + 1
        while cursor < len(text):
            line_end = text.find("\n", cursor)
            line_end = len(text) if line_end < 0 else line_end
            line = text[cursor:line_end]
            if line.strip():
                indent = len(line) - len(line.lstrip())
                if indent <= base:
                    break  # the block ends where the text comes back to the directive's indentation
                if term_indent is None and not _OPTION.match(line):
                    term_indent = indent
                if indent == term_indent:
                    found = named_term(line.strip())
                    if found is not None:
                        start = cursor + indent
                        yield _entry(found[0], found[1], passage_at(start), start, line_end)
            cursor = line_end + 1


def _page_entry(document: KnowledgeDocument, first: KnowledgePassage) -> Iterable[Evidence]:
    found = named_term(document.title)
    if found is not None:
        yield _entry(found[0], found[1], first, first.start, first.start)
        for other in _also_known_as(document.text):
            yield _entry(found[0], other, first, first.start, first.start)


def _also_known_as(text: str) -> list[str]:
    """The `aka` names in a page's front matter (the reader keeps only scalar fields, so read it here)."""
    block = _FRONT_MATTER.match(text)
    if block is None or "aka" not in block.group("body"):
        return []
    import yaml  # with the first build, like the rest of extraction

    try:
        meta = yaml.safe_load(block.group("body"))
    except yaml.YAMLError:
        return []
    names = meta.get("aka") if isinstance(meta, dict) else None
    names = [names] if isinstance(names, str) else names if isinstance(names, list) else []
    return [clean_term(str(n)) for n in names if isinstance(n, (str, int)) and plausible_term(clean_term(str(n)))]


def _listed_entries(document: KnowledgeDocument, passage_at: PassageAt) -> Iterable[Evidence]:
    for pattern in (_DEFINITION_LIST, _BOLD_ITEM):
        for match in pattern.finditer(document.text):
            found = named_term(match.group("term").strip())
            if found is not None:
                start = match.start("term")
                yield _entry(found[0], found[1], passage_at(start), start, match.end("term"))


def _heading_entries(document: KnowledgeDocument, passages: Sequence[KnowledgePassage]) -> Iterable[Evidence]:
    seen = {document.title.strip().lower(), *GLOSSARY_NAMES}  # the glossary's own title is no entry
    for passage in passages:
        if not passage.headings or passage.headings[-1].strip().lower() in seen:
            continue
        seen.add(passage.headings[-1].strip().lower())
        found = named_term(passage.headings[-1])
        if found is not None:
            yield _entry(found[0], found[1], passage, passage.start, passage.start)
