"""Bytes a documentation folder really holds → text: BOMs, UTF-16/32, single-byte code pages, binary files named
like pages, control characters (text_decoding.py; bench/corpus_probes.py found each of these served as
mojibake, NULs and escape codes)."""

from __future__ import annotations

import codecs
import os
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.tools.knowledge.chunking import chunk_document
from hexmcp.tools.knowledge.corpus import CorpusSpec, SkippedFile, load_documents
from hexmcp.tools.knowledge.errors import CorpusError
from hexmcp.tools.knowledge.readers import parse_file
from hexmcp.tools.knowledge.text_decoding import decode_text, scrub_controls

PAGE = "# Café Überblick\n\nDie Daten liegen in Zürich, «façade» naïve.\n"


def clean(text: str) -> bool:
    """No control character but tab and line ends, no surrogate, no BOM: what every answer may carry."""
    return all((unicodedata.category(c) not in ("Cc", "Cs") or c in "\t\n\v\f\r") and c != "\ufeff" for c in text)


@pytest.mark.parametrize("data", [
    codecs.BOM_UTF8 + PAGE.encode(),
    codecs.BOM_UTF16_LE + PAGE.encode("utf-16-le"),
    codecs.BOM_UTF16_BE + PAGE.encode("utf-16-be"),
    codecs.BOM_UTF32_LE + PAGE.encode("utf-32-le"),
    codecs.BOM_UTF32_BE + PAGE.encode("utf-32-be"),
    PAGE.encode("utf-16-le"),  # Notepad's "Unicode" without its mark
    PAGE.encode("utf-16-be"),
    PAGE.encode("latin-1"),
    PAGE.encode("cp1252"),
    PAGE.encode("utf-8"),
], ids=["utf-8 BOM", "utf-16-le BOM", "utf-16-be BOM", "utf-32-le BOM", "utf-32-be BOM", "utf-16-le", "utf-16-be",
        "latin-1", "cp1252", "utf-8"])
def test_a_page_in_any_common_encoding_reads_as_its_text(data: bytes) -> None:
    assert decode_text("p.md", data) == PAGE
    document = parse_file("p.md", ".md", data)
    assert document.title == "Café Überblick"


def test_a_utf8_page_with_one_stray_byte_keeps_its_utf8() -> None:
    text = decode_text("p.md", PAGE.encode() + b"\xff\n")
    assert text.startswith(PAGE) and text.count("\ufffd") == 1


def test_windows_1252_bytes_it_leaves_undefined_do_not_fail_the_page() -> None:
    assert decode_text("p.md", "r\u00e9sum\u00e9 ".encode("cp1252") + b"\x81\x8d end\n") == "r\u00e9sum\u00e9    end\n"


@pytest.mark.parametrize("data", [os.urandom(8192), b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(2048),
                                  b"PK\x03\x04" + bytes(range(256)) * 8, b"\x00" * 4096])
def test_binary_data_named_like_a_page_is_refused_naming_the_file(data: bytes) -> None:
    with pytest.raises(CorpusError, match=r"^logo\.md: binary data"):
        parse_file("logo.md", ".md", data)


def test_control_characters_become_spaces_so_offsets_and_line_ends_hold() -> None:
    text = "# T\x00itle\r\n\x1b[31mred\x1b[0m\tand a bell\x07\n"
    scrubbed = scrub_controls(text)
    assert len(scrubbed) == len(text) and clean(scrubbed) and scrubbed.count("\n") == 2 and "\r\n" in scrubbed
    assert parse_file("p.md", ".md", (text + "plain words " * 20).encode()).title == "T itle"


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=3000), suffix=st.sampled_from([".md", ".mdx", ".txt", ".rst"]))
def test_any_bytes_read_as_a_page_or_refused_and_passages_are_clean_text(data: bytes, suffix: str) -> None:
    try:
        document = parse_file("any" + suffix, suffix, data)
    except CorpusError as error:
        assert str(error).startswith("any" + suffix)
        return
    assert clean(document.text) and clean(document.title)
    for passage in chunk_document(document):
        assert clean(passage.text) and passage.text == document.text[passage.start:passage.end]
        passage.indexed_text().encode("utf-8")  # no lone surrogate: every passage can be sent and embedded


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=400), codec=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32"]))
def test_text_with_a_bom_or_valid_utf8_comes_back_as_written_but_for_its_controls(text: str, codec: str) -> None:
    text = text.replace("\ud800", "")  # not encodable, so no file holds it
    try:
        data = text.encode(codec)
    except UnicodeEncodeError:
        return
    if codec == "utf-8" and text.startswith("\ufeff"):
        return  # a leading U+FEFF written in UTF-8 is a BOM, whatever the writer meant
    if codec == "utf-16" and text.startswith("\x00"):
        return  # FF FE 00 00 is UTF-32's BOM too: a page does not start with NUL
    try:
        assert decode_text("t.md", data) == scrub_controls(text)
    except CorpusError:
        assert sum(c != " " for c in scrub_controls(text)) < len(text)  # refused only where controls abound


def test_load_documents_names_each_skipped_file_and_why(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text("# Fine\n\ntext\n")
    (tmp_path / "logo.md").write_bytes(os.urandom(4096))
    (tmp_path / "huge.txt").write_bytes(b"x" * (16 * 1024 * 1024 + 1))
    skipped: list[SkippedFile] = []
    documents = load_documents(CorpusSpec(roots=[tmp_path]), skipped)
    assert [d.document_id for d in documents] == ["ok.md"]
    assert {s.document_id: s.reason.split(":")[1].strip() for s in skipped} == {
        "huge.txt": "over 16,777,216 bytes, the limit for a .txt file; not read", "logo.md": "binary data, not text; not read"}


def test_a_skipped_file_is_warned_about_once_while_its_bytes_stay_the_same(tmp_path: Path) -> None:
    from structlog.testing import capture_logs

    (tmp_path / "ok.md").write_text("# Fine\n\ntext\n")
    (tmp_path / "logo.md").write_bytes(os.urandom(4096))
    spec = CorpusSpec(roots=[tmp_path])
    with capture_logs() as logs:
        for round_ in range(3):  # the watcher reads the corpus again on every change
            skipped: list[SkippedFile] = []
            load_documents(spec, skipped)
            assert [s.document_id for s in skipped] == ["logo.md"]
            (tmp_path / "ok.md").write_text(f"# Fine\n\nedit {round_}\n")
        (tmp_path / "logo.md").write_bytes(os.urandom(4096))  # new bytes, still binary: named again
        load_documents(spec)
    warned = [e["document"] for e in logs if e["event"] == "skipping unreadable document"]
    assert warned == ["logo.md", "logo.md"]


def test_a_file_name_that_is_not_utf8_is_skipped_and_named_not_the_whole_corpus(tmp_path: Path) -> None:
    """Its bad bytes arrive as lone surrogates: the passage ids' hashing raised on them and the build stopped."""
    (tmp_path / "ok.md").write_text("# Fine\n\ntext\n")
    (Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9.md"))).write_text("# Latin-1 name\n\ntext\n")
    skipped: list[SkippedFile] = []
    documents = load_documents(CorpusSpec(roots=[tmp_path]), skipped)
    assert [d.document_id for d in documents] == ["ok.md"]
    assert skipped == [SkippedFile(document_id="caf\\xe9.md", reason="caf\\xe9.md: the file name is not UTF-8; not read")]
    for document in documents:
        chunk_document(document)
