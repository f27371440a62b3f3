"""A built documentation page (.html, .htm) → a SourceDocument of its text, sectioned by h1-h6.

Parsed by selectolax's Lexbor engine (an HTML5 parser: broken markup is repaired the way browsers
repair it; docs/adr/0606-html-documents.md says why this one). The text is the page's content, not
its chrome: the first `[role=main]`, `<main>` or `<article>` (else `<body>`), without scripts,
styles, navigation, headers, footers, asides and permalink anchors. Like a PDF's, the document's text
is what was extracted, and offsets index it.

Hostile input ends in a CorpusError, never a hang: a file over MAX_HTML_BYTES, bytes that are not
text, or elements nested deeper than MAX_NESTING (Lexbor's tree building slows with the square of
the depth: 50,000 nested <div>s took 24 s), which a scan of the tags estimates before parsing.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

from .errors import CorpusError
from .passages import SourceDocument
from .sectioning import fallback_title, sections_from_headings
from .text_decoding import scrub_controls

MAX_HTML_BYTES = 16 * 1024 * 1024
MAX_NESTING = 256  # real documentation pages nest tens deep; libxml2 refuses deeper trees by default

_CHROME_TAGS = ("script", "style", "noscript", "template", "nav", "header", "footer", "aside", "svg", "iframe",
                "object", "button", "form")
_CHROME_SELECTOR = ", ".join((*_CHROME_TAGS, "[role=navigation]", "[role=banner]", "[role=contentinfo]",
                              "[role=complementary]", "[role=search]", "[hidden]", "a.headerlink", "a.hash-link",
                              "a.anchor-link"))
_CONTENT_ROOTS = ("[role=main]", "main", "article")
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Elements that end a line of text; the rest flow inline.
_BLOCKS = frozenset({"address", "article", "blockquote", "caption", "dd", "details", "dialog", "div", "dl", "dt",
                     "fieldset", "figcaption", "figure", "hr", "li", "main", "ol", "p", "pre", "section", "summary",
                     "table", "tbody", "thead", "tfoot", "tr", "ul", *_HEADINGS})
_CELLS = frozenset({"td", "th"})
_PERMALINK_MARKS = "¶#§\u200b🔗 \t"

# The nesting estimate: every start tag opens, every end tag closes, except elements that never hold
# others (void), whose end tag may be left out (a run of unclosed <p>s is a sibling list, not depth), or
# that a new one closes (<a>, <nobr>). Other formatting elements left open do deepen the stack of open
# elements the parser searches (20,000 rounds of `<font><b><i><u>x</p>` took 5 s of CPU).
_TAG = re.compile(rb"<(/?)([A-Za-z][A-Za-z0-9-]*)[^>]*?(/?)>")
_NOT_NESTING = frozenset(b"area base br col embed hr img input link meta param source track wbr "
                         b"p li dt dd tr td th thead tbody tfoot option optgroup colgroup rb rt rp html head body "
                         b"a nobr".split())
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def read_html(document_id: str, data: bytes) -> SourceDocument:
    from selectolax.lexbor import LexborHTMLParser


    if len(data) > MAX_HTML_BYTES:
        raise CorpusError(f"{document_id}: {len(data):,} bytes of HTML; the limit is {MAX_HTML_BYTES:,}")
    if b"\x00" in data[:65536]:
        raise CorpusError(f"{document_id}: not an HTML page (binary data)")
    depth = nesting_estimate(data)
    if depth > MAX_NESTING:
        raise CorpusError(f"{document_id}: elements nested about {depth:,} deep; the limit is {MAX_NESTING:,}")
    tree = LexborHTMLParser(_decode(data))
    for node in tree.css(_CHROME_SELECTOR):
        node.decompose()
    root = next((found for found in map(tree.css_first, _CONTENT_ROOTS) if found is not None), None)
    root = root or tree.body or tree.root
    text, headings = _render(root) if root is not None else ("", [])
    # A page's &#27; or stray control bytes mean nothing to a reader (text_decoding.py); same length, same offsets.
    text, headings = scrub_controls(text), [(offset, level, scrub_controls(title)) for offset, level, title in headings]
    title_node = tree.css_first("title")
    first_h1 = next((title for _, level, title in headings if level == 1), "")
    page_title = _collapse(scrub_controls(title_node.text(deep=True))) if title_node is not None else ""
    return SourceDocument(document_id=document_id, title=first_h1 or page_title or fallback_title(document_id),
                          text=text, media_type="text/html", sections=sections_from_headings(text, 0, headings))


def nesting_estimate(data: bytes) -> int:
    """The deepest the page's elements would nest if every tag that can hold others were closed where
    its end tag stands: a linear scan, so depth is known before the parser, quadratic in it, runs."""
    depth = deepest = 0
    for match in _TAG.finditer(data):
        closing, name, self_closing = match.groups()
        if self_closing or name.lower() in _NOT_NESTING:
            continue
        depth = max(depth - 1, 0) if closing else depth + 1
        deepest = max(deepest, depth)
    return deepest


def _decode(data: bytes) -> str:
    """UTF-8 (the web's default) unless a BOM or a <meta charset> names a codec Python knows."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    declared = _META_CHARSET.search(data[:4096])
    if declared:
        try:
            codec = codecs.lookup(declared.group(1).decode("ascii"))
        except LookupError:
            codec = None
        # A page that says utf-16 in a <meta> cannot be (the tag would not read as ASCII): browsers ignore it.
        if codec is not None and codec.name != "utf-8" and not codec.name.startswith(("utf-16", "utf-32")):
            return data.decode(codec.name, errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def _collapse(text: str) -> str:
    return " ".join(text.split())


_BREAK_STRENGTH = {"": 0, " ": 1, " | ": 2, "\n": 3, "\n\n": 4}


class _Writer:
    """The page's text as it is written out: the strongest break owed between two runs of text is the
    one written (a paragraph's end beats a space), and none before the first or after the last."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.pending = ""

    def owe(self, separator: str) -> None:
        if _BREAK_STRENGTH[separator] > _BREAK_STRENGTH[self.pending]:
            self.pending = separator

    def write(self, text: str) -> int:
        """Writes `text` after the break owed; returns the offset it starts at."""
        if self.pending and self.length:
            self.parts.append(self.pending)
            self.length += len(self.pending)
        self.pending = ""
        start = self.length
        self.parts.append(text)
        self.length += len(text)
        return start

    def text(self) -> str:
        return "".join(self.parts)


def _render(root: Any) -> tuple[str, list[tuple[int, int, str]]]:
    """(text, headings as (offset, level, title)), walking the tree without recursion: a page nested
    hundreds deep must not reach Python's recursion limit."""
    out = _Writer()
    headings: list[tuple[int, int, str]] = []
    stack: list[tuple[Any, bool]] = [(root, False)]
    preformatted = 0
    while stack:
        node, leaving = stack.pop()
        tag = node.tag or ""
        if leaving:
            preformatted -= tag == "pre"
            if tag in _BLOCKS:
                out.owe("\n" if tag in ("li", "tr", "dt", "dd") else "\n\n")
            continue
        if node.is_text_node:
            raw = node.text_content or ""
            if preformatted:
                if raw:
                    out.write(raw)
            else:
                if raw[:1].isspace():
                    out.owe(" ")
                words = _collapse(raw)
                if words:
                    out.write(words)
                if raw[-1:].isspace():
                    out.owe(" ")
            continue
        if not node.is_element_node and not node.is_document_node:
            continue  # comments, doctypes
        if tag in _HEADINGS:
            title = _collapse(node.text(deep=True)).rstrip(_PERMALINK_MARKS).strip()
            if title:
                out.owe("\n\n")
                headings.append((out.write(title), _HEADINGS[tag], title))
                out.owe("\n\n")
            continue
        if tag == "br":
            out.owe("\n")
            continue
        if tag in _BLOCKS:
            out.owe("\n" if tag in ("li", "tr", "dt", "dd") else "\n\n")
        elif tag in _CELLS:
            out.owe(" | ")
        if tag == "pre":
            preformatted += 1
        stack.append((node, True))
        children = list(node.iter(include_text=True))
        stack.extend((child, False) for child in reversed(children))
    return out.text(), headings
