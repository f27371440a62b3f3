"""Corpus loading and chunking: formats, front matter, globs, stable ids, exact offsets."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.tools.knowledge.chunking import chunk_document
from hexmcp.tools.knowledge.corpus import CorpusSpec, discover, load_documents
from hexmcp.tools.knowledge import readers
from hexmcp.tools.knowledge.errors import CorpusError
from hexmcp.tools.knowledge.readers import parse_markdown, parse_rst, read_document

from tests.support.fresh_imports import modules_imported_by

MARKDOWN = """---
title: The Guide
tags: [a, b]
---
Intro before any heading.

# Setup

Install it.

```bash
# not a heading
pip install thing
```

## Linux

Use apt.

# Usage

Run it.
"""

RST = """=====
Title
=====

Intro paragraph.

Install
=======

Use pip here.

Details
-------

More words.
"""


def _pdf_with_text(lines: list[str]) -> bytes:
    """A real PDF with one page per line of text, built with pypdf's own object model."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    for line in lines:
        page = writer.add_blank_page(width=612, height=792)
        font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                                 NameObject("/BaseFont"): NameObject("/Helvetica")})
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})})
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 12 Tf 72 720 Td ({line}) Tj ET".encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_markdown_front_matter_titles_the_document_and_is_not_a_section() -> None:
    document = parse_markdown("guide.md", MARKDOWN)
    assert document.title == "The Guide"
    assert document.metadata["title"] == "The Guide"
    assert [s.headings for s in document.sections] == [(), ("Setup",), ("Setup", "Linux"), ("Usage",)]
    assert "title:" not in document.text[document.sections[0].start:document.sections[0].end]


def test_a_hash_inside_a_code_fence_is_not_a_heading() -> None:
    document = parse_markdown("guide.md", MARKDOWN)
    assert all("not a heading" not in h for s in document.sections for h in s.headings)


def test_markdown_without_front_matter_takes_its_first_h1_as_title() -> None:
    assert parse_markdown("a/b.md", "# Real Title\n\ntext\n").title == "Real Title"
    assert parse_markdown("a/b-c.md", "no heading\n").title == "b c"


def test_rst_sections_follow_the_doctree() -> None:
    document = parse_rst("guide.rst", RST)
    assert document.title == "Title"
    headings = [s.headings for s in document.sections]
    assert ("Install",) in headings and ("Install", "Details") in headings
    install = next(s for s in document.sections if s.headings == ("Install",))
    assert document.text[install.start:install.end].startswith("Install\n=======")


def test_pdf_pages_become_sections(tmp_path: Path) -> None:
    path = tmp_path / "manual.pdf"
    path.write_bytes(_pdf_with_text(["Alpha page words", "Beta page words"]))
    document = read_document("manual.pdf", path)
    assert [s.headings for s in document.sections] == [("Page 1",), ("Page 2",)]
    passages = chunk_document(document)
    assert "Beta page words" in passages[1].text


def test_a_broken_pdf_is_skipped_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    (tmp_path / "ok.md").write_text("# Ok\n\nfine\n")
    assert [d.document_id for d in load_documents(CorpusSpec(roots=[tmp_path]))] == ["ok.md"]


def test_a_file_over_its_formats_byte_limit_is_skipped_not_read(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readers, "DEFAULT_DOCUMENT_BYTES", 64)
    (tmp_path / "dump.txt").write_text("word " * 20)  # 100 bytes
    (tmp_path / "limit.md").write_text("# T\n\n" + "x" * 59)  # exactly 64 bytes: still read
    (tmp_path / "ok.md").write_text("# Ok\n\nfine\n")
    assert [d.document_id for d in load_documents(CorpusSpec(roots=[tmp_path]))] == ["limit.md", "ok.md"]
    with pytest.raises(CorpusError, match=r"dump.txt: over 64 bytes, the limit for a .txt file"):
        read_document("dump.txt", tmp_path / "dump.txt")


def test_a_pdf_has_a_limit_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readers, "DEFAULT_DOCUMENT_BYTES", 10)
    assert readers.document_byte_limit(".PDF") == readers.DOCUMENT_BYTES[".pdf"] > readers.document_byte_limit(".md")


def test_discovery_is_recursive_filtered_and_relative(tmp_path: Path) -> None:
    for name in ("a.md", "sub/b.mdx", "sub/deep/c.rst", "d.txt", "e.py", ".hidden/f.md", "sub/skip.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("# x\n\ny\n")
    ids = [f.document_id for f in discover(CorpusSpec(roots=[tmp_path], exclude=["sub/skip.md"]))]
    assert ids == ["a.md", "d.txt", "sub/b.mdx", "sub/deep/c.rst"]
    only = [f.document_id for f in discover(CorpusSpec(roots=[tmp_path], include=["sub/*"]))]
    assert only == ["sub/b.mdx", "sub/deep/c.rst", "sub/skip.md"]


def test_a_missing_root_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no such file"):
        discover(CorpusSpec(roots=[tmp_path / "nope"]))


def test_ids_do_not_depend_on_where_the_corpus_lives(tmp_path: Path) -> None:
    for place in ("one", "two/deeper"):
        (tmp_path / place / "docs").mkdir(parents=True)
        (tmp_path / place / "docs" / "guide.md").write_text(MARKDOWN)
    first, second = (load_documents(CorpusSpec(roots=[tmp_path / p])) for p in ("one", "two/deeper"))
    assert [p.passage_id for p in chunk_document(first[0])] == [p.passage_id for p in chunk_document(second[0])]
    assert first[0].document_id == "docs/guide.md"


def test_the_bundled_corpus_is_hexmcps_own_documentation() -> None:
    ids = [d.document_id for d in load_documents(CorpusSpec())]
    assert "README.md" in ids
    assert any(i.startswith("docs/adr/0001-") for i in ids)


_text = st.lists(st.one_of(st.sampled_from(["# H1", "## H2", "### H3", "", "```", "---"]),
                           st.text(st.characters(blacklist_categories=["Cs"]), max_size=300)),
                 max_size=40).map("\n".join)


@settings(max_examples=150, deadline=None)
@given(text=_text, max_chars=st.integers(40, 600))
def test_passages_are_exact_bounded_slices_with_unique_ids(text: str, max_chars: int) -> None:
    document = parse_markdown("doc.md", text)
    passages = chunk_document(document, max_chars=max_chars)
    assert len({p.passage_id for p in passages}) == len(passages)
    previous_end = 0
    for passage in passages:
        assert passage.text == document.text[passage.start:passage.end]
        assert passage.text.strip() and 0 < passage.end - passage.start <= max_chars
        assert passage.start >= previous_end  # in order, never overlapping
        previous_end = passage.end
    assert chunk_document(parse_markdown("doc.md", text), max_chars=max_chars) == passages


def test_registering_the_tools_leaves_numpy_unloaded() -> None:
    """The stdio cold start pays for numpy only when the index builds, in the background."""
    code = ("from hexmcp.core import McpServer\n"
            "from hexmcp.core.registrar import Registrar\n"
            "from hexmcp.tools.knowledge.mcp_tools import register_knowledge_tools\n"
            "from hexmcp.tools.knowledge.service import KnowledgeConfig\n"
            "register_knowledge_tools(Registrar(McpServer('t', '0')), KnowledgeConfig())")
    assert modules_imported_by(code, ("numpy", "onnxruntime", "bm25s"), timeout_s=60) == []


@given(query=st.text(max_size=1200))
def test_a_query_is_refused_or_cleaned(query: str) -> None:
    from hexmcp.tools.knowledge.errors import QueryError
    from hexmcp.tools.knowledge.queries import MAX_QUERY_CHARS, clean_query

    try:
        cleaned = clean_query(query)
    except QueryError as error:
        assert not query.strip() or str(MAX_QUERY_CHARS) in str(error)
        return
    assert cleaned == cleaned.strip() and cleaned and "  " not in cleaned and len(query) <= MAX_QUERY_CHARS
