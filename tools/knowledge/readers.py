"""One file → a SourceDocument with its sections, per format.

Markdown (.md, .mdx, .markdown) is parsed by markdown-it-py, so a `#` inside a code fence is not a
heading and YAML front matter (mdit-py-plugins) is read, not indexed: its `title` names the
document. reStructuredText sections come from docutils' doctree, in `.rst` files and in `.txt` files
that show reST markup (rst_sniffing.py); PDF text from pypdf (one section per page); an HTML page's
text and h1-h6 sections from html_reader.py; other plain text is one section. Offsets always index
`SourceDocument.text`, which for PDF and HTML is the text extracted (EXTRACTED_MEDIA_TYPES). Bytes become
text in text_decoding.py (BOMs, UTF-16, Latin-1 pages, binary files refused, control characters cut).
"""

from __future__ import annotations

import bisect
import logging
import re
from pathlib import Path
from typing import Any, Callable

from .errors import CorpusError
from .passages import Section, SourceDocument
from .rst_sniffing import looks_like_rst
from .sectioning import fallback_title, sections_from_headings
from .text_decoding import decode_text, scrub_controls

# markdown-it logs every block rule it tries at DEBUG: tens of thousands of lines per corpus under
# --log-level debug, drowning hexmcp's own. Its warnings still come through.
logging.getLogger("markdown_it").setLevel(logging.INFO)

MARKDOWN_SUFFIXES = (".md", ".mdx", ".markdown")
HTML_SUFFIXES = (".html", ".htm")
SUFFIXES = (*MARKDOWN_SUFFIXES, ".txt", ".rst", ".pdf", *HTML_SUFFIXES)
#: Formats whose SourceDocument.text is extracted from the file rather than the file itself: served as
#: text/plain (an HTML page's text served as text/html would be rendered as markup).
EXTRACTED_MEDIA_TYPES = frozenset({"application/pdf", "text/html"})


#: The most bytes one file may have, by suffix (default: DEFAULT_DOCUMENT_BYTES). A corpus folder can hold
#: a stray log, dump or disc image named `.txt` or `.pdf`: read whole it would take the process's memory and
#: hours of embedding. Far above real pages (the largest page of the four public sets is 0.15 MB) and books.
DEFAULT_DOCUMENT_BYTES = 16 * 1024 * 1024
DOCUMENT_BYTES = {".pdf": 64 * 1024 * 1024}


def document_byte_limit(suffix: str) -> int:
    return DOCUMENT_BYTES.get(suffix.lower(), DEFAULT_DOCUMENT_BYTES)


def read_file_bytes(document_id: str, path: Path) -> bytes:
    """A file's bytes, or a CorpusError if it holds more than its format's limit. Reads at most one byte
    past the limit, so a file that grows after it was listed cannot take more memory than that either."""
    limit = document_byte_limit(path.suffix)
    with path.open("rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise CorpusError(f"{document_id}: over {limit:,} bytes, the limit for a {path.suffix.lower()} file; "
                          f"not read")
    return data


def read_document(document_id: str, path: Path) -> SourceDocument:
    return parse_file(document_id, path.suffix.lower(), read_file_bytes(document_id, path))


def parse_file(document_id: str, suffix: str, data: bytes) -> SourceDocument:
    """A file's bytes, read by the parser its (lower-case) suffix names."""
    if suffix == ".pdf":
        return read_pdf(document_id, data)
    if suffix in HTML_SUFFIXES:
        from .html_reader import read_html  # selectolax loads only for a corpus that has HTML

        return read_html(document_id, data)
    return parse_text(document_id, decode_text(document_id, data), suffix)


def parse_text(document_id: str, text: str, suffix: str) -> SourceDocument:
    parsers: dict[str, Callable[[str, str], SourceDocument]] = {".rst": _parse_rst_or_plain, ".txt": parse_txt}
    parser = parsers.get(suffix, parse_markdown if suffix in MARKDOWN_SUFFIXES else None)
    if parser is None:
        raise CorpusError(f"{document_id}: unsupported file type {suffix!r} (supported: {', '.join(SUFFIXES)})")
    return parser(document_id, text)


def served_media_type(media_type: str) -> str:
    """The type of the text a document is served as (its resource, /docs/<id>)."""
    return "text/plain" if media_type in EXTRACTED_MEDIA_TYPES else media_type


_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the parsers' own rule: \r\n, \r and \n each end a line


def _line_starts(text: str) -> list[int]:
    return [0, *(match.end() for match in _LINE_BREAK.finditer(text))]


def parse_markdown(document_id: str, text: str) -> SourceDocument:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    tokens = MarkdownIt("commonmark").use(front_matter_plugin).parse(text)
    starts = _line_starts(text)
    meta: dict[str, Any] = {}
    body_start = 0
    headings: list[tuple[int, int, str]] = []
    for index, token in enumerate(tokens):
        if token.type == "front_matter" and token.map:
            meta = _front_matter(token.content)
            body_start = starts[token.map[1]] if token.map[1] < len(starts) else len(text)
        elif token.type == "heading_open" and token.map:
            title = tokens[index + 1].content.strip()
            headings.append((starts[token.map[0]], int(token.tag[1:]), title))
    # Only a scalar title: str() of a list or mapping that YAML aliases nest ("billion laughs" front matter, nine
    # lists of nine aliases ten deep) builds billions of items, and the parse never ended.
    declared = meta.get("title")
    title = str(declared).strip() if isinstance(declared, (str, int, float)) else ""
    if not title:
        top = [h for h in headings if h[1] == 1]
        title = top[0][2] if top else fallback_title(document_id)
    return SourceDocument(document_id=document_id, title=title, text=text, media_type="text/markdown",
                          sections=sections_from_headings(text, body_start, headings),
                          metadata={k: str(v) for k, v in meta.items() if isinstance(v, (str, int, float))})


def _front_matter(content: str) -> dict[str, Any]:
    # Bad front matter is the author's problem, not a reason to drop the document: index the body.
    import yaml  # here, not at the top: corpus.py imports this module before serving, and PyYAML costs a cold start

    try:
        loaded = yaml.safe_load(content)
    except (yaml.YAMLError, RecursionError):  # PyYAML builds nested values recursively: `[[[[…` thousands deep
        return {}
    return loaded if isinstance(loaded, dict) else {}


def parse_rst(document_id: str, text: str) -> SourceDocument:
    import docutils.core
    import docutils.nodes

    settings = {"report_level": 5, "halt_level": 5, "warning_stream": False, "file_insertion_enabled": False,
                "raw_enabled": False}
    try:
        doctree = docutils.core.publish_doctree(text, settings_overrides=settings)
    except KeyError:
        # docutils (0.23) raises KeyError when a substitution used before its definition nests one the page
        # never defines: Sphinx projects define such substitutions once, in conf.py's rst_epilog (Ansible's
        # |br| in 23 network pages), which a reader of one page does not see. Stand-ins after the text (no
        # line moves) let the page read with its sections instead of being skipped.
        doctree = docutils.core.publish_doctree(text + _stand_in_substitutions(text), settings_overrides=settings)
    starts = _line_starts(text)
    headings: list[tuple[int, int, str]] = []
    cursor = 0

    def depth(node: Any) -> int:
        level = 0
        while node is not None:
            level += isinstance(node, docutils.nodes.section)
            node = node.parent
        return level

    # Sections come in document order: each title is looked for on the line docutils reports (its
    # underline's, one below the text), else searched for from where the previous one was found.
    for section in doctree.findall(docutils.nodes.section):
        title = section.next_node(docutils.nodes.title)
        if title is None:
            continue
        line_start = _rst_title_line(text, starts, title, cursor)
        if line_start is None:
            continue
        cursor = line_start + 1
        headings.append((line_start, depth(section), title.astext().strip()))
    doc_title = doctree.get("title") or (headings[0][2] if headings else fallback_title(document_id))
    return SourceDocument(document_id=document_id, title=str(doc_title), text=text, media_type="text/x-rst",
                          sections=sections_from_headings(text, 0, headings))


def _rst_title_line(text: str, starts: list[int], title: Any, cursor: int) -> int | None:
    """Where a section title's lines start (at its overline, if it has one), at or after `cursor`.
    The raw title keeps its markup ("The ``Paginator`` class"), which astext() drops."""
    raw = (title.rawsource or title.astext()).strip()
    if not raw:
        return None
    index = title.line - 2 if isinstance(title.line, int) else -1  # docutils counts from 1, at the underline
    if 0 <= index < len(starts) and starts[index] >= cursor and raw in _line(text, starts, index):
        overline = index >= 1 and _ADORNMENT_LINE.fullmatch(_line(text, starts, index - 1))
        return starts[index - 1] if overline else starts[index]
    found = text.find(raw, cursor)
    return None if found < 0 else starts[bisect.bisect_right(starts, found) - 1]


def _line(text: str, starts: list[int], index: int) -> str:
    return text[starts[index]:starts[index + 1] if index + 1 < len(starts) else len(text)]


_SUBSTITUTION_REFERENCE = re.compile(r"(?<![\w|])\|([^\s|](?:[^|\n]*[^\s|])?)\|(?:__?)?(?![\w|])")
_SUBSTITUTION_DEFINITION = re.compile(r"^\.\.[ \t]+\|([^|\n]+)\|[ \t]", re.MULTILINE)


def _stand_in_substitutions(text: str) -> str:
    """A definition (`replace::` by its own name) for every substitution `text` refers to but never defines."""
    defined = {_substitution_key(name) for name in _SUBSTITUTION_DEFINITION.findall(text)}
    missing = sorted({name for name in _SUBSTITUTION_REFERENCE.findall(text) if _substitution_key(name) not in defined})
    return "".join(f"\n\n.. |{name}| replace:: {_escaped(name)}" for name in missing)


def _escaped(text: str) -> str:
    return _MARKUP_CHARACTER.sub(r"\\\g<0>", text)


def _substitution_key(name: str) -> str:
    return " ".join(name.split()).lower()  # docutils' fallback match of a name: case and spacing ignored


_MARKUP_CHARACTER = re.compile(r"[\\`*_|]")


_ADORNMENT_LINE = re.compile(r"([!-/:-@\[-`{-~])\1{2,}[ \t]*(?:\r\n|\r|\n)?")


def parse_txt(document_id: str, text: str) -> SourceDocument:
    """Sphinx projects keep reStructuredText in `.txt` files (Django does): read as reST when the opening
    shows reST's markup (rst_sniffing.py), else as plain text; reST that docutils cannot take stays text."""
    if looks_like_rst(text):
        try:
            return parse_rst(document_id, text)
        except Exception:  # noqa: BLE001 - docutils raises anything on input it chokes on
            logging.getLogger(__name__).debug("read as plain text: docutils failed", exc_info=True)
    return parse_plain(document_id, text)


def _parse_rst_or_plain(document_id: str, text: str) -> SourceDocument:
    """docutils parses nested blocks recursively: a page nested some hundreds deep (block quotes, lists) ends
    in RecursionError. Its text is still worth finding, as plain text, rather than the page skipped."""
    try:
        return parse_rst(document_id, text)
    except RecursionError:
        logging.getLogger(__name__).warning("%s: nested too deep for docutils; read as plain text", document_id)
        return parse_plain(document_id, text)


def parse_plain(document_id: str, text: str) -> SourceDocument:
    sections = (Section(headings=(), start=0, end=len(text)),) if text.strip() else ()
    return SourceDocument(document_id=document_id, title=fallback_title(document_id), text=text,
                          media_type="text/plain", sections=sections)


def read_pdf(document_id: str, data: bytes) -> SourceDocument:
    import io

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [scrub_controls(page.extract_text() or "") for page in reader.pages]
        info_title = (reader.metadata.title if reader.metadata else None) or ""
    except (PdfReadError, ValueError, KeyError) as error:
        raise CorpusError(f"{document_id}: not a readable PDF ({error})") from None
    parts: list[str] = []
    sections: list[Section] = []
    offset = 0
    for number, page in enumerate(pages, start=1):
        if page.strip():
            sections.append(Section(headings=(f"Page {number}",), start=offset, end=offset + len(page)))
        parts.append(page)
        offset += len(page) + 2
    return SourceDocument(document_id=document_id, title=str(info_title).strip() or fallback_title(document_id),
                          text="\n\n".join(parts), media_type="application/pdf", sections=tuple(sections))
