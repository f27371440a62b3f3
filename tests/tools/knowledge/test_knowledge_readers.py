"""Documentation as its authors wrote it: reStructuredText kept in .txt files (Sphinx projects), and
built HTML pages, each read into a title, sections and heading paths."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexmcp.tools.knowledge import html_reader
from hexmcp.tools.knowledge.builder import vectors_key
from hexmcp.tools.knowledge.chunking import chunk_document
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.errors import CorpusError
from hexmcp.tools.knowledge.html_reader import read_html
from hexmcp.tools.knowledge.readers import parse_plain, parse_text, read_document, served_media_type
from hexmcp.tools.knowledge.rst_sniffing import SNIFF_LINES, looks_like_rst
from hexmcp.tools.knowledge.versions import page_key

DJANGO = Path(__file__).resolve().parents[3] / "bench" / "data" / "corpora" / "django" / "docs"

SPHINX_TXT = """==========
Pagination
==========

Django provides high-level and low-level ways to help you manage paginated data.

.. _paginator-class:

The ``Paginator`` class
=======================

Under the hood, all methods of pagination use the :class:`~django.core.paginator.Paginator` class.

Example
-------

Give :class:`Paginator` a list of objects::

    >>> p = Paginator(objects, 2)
"""

README_TXT = """Thing, a tool for doing things.

Copyright (c) 2024 Somebody. All rights reserved.

Install it with pip, then run it: thing --help prints the options.
Questions go to the mailing list; bugs to the tracker.

----

Changes: see the file NEWS.
"""

LOG_TXT = """2024-05-01 12:00:01 INFO starting
2024-05-01 12:00:02 WARN disk at 91%
name      size   used
--------  -----  ----
/         100G   91G
2024-05-01 12:00:03 INFO done
"""


# --- reST in .txt files -------------------------------------------------------------------------

def test_a_sphinx_txt_page_is_read_as_rest_with_its_title_and_heading_paths() -> None:
    document = parse_text("topics/pagination.txt", SPHINX_TXT, ".txt")
    assert document.media_type == "text/x-rst"
    assert document.title == "Pagination"
    headings = [s.headings for s in document.sections]
    # A title with inline markup is found (docutils' text drops the ``...``) and named without it.
    assert ("The Paginator class",) in headings and ("The Paginator class", "Example") in headings
    example = next(s for s in document.sections if s.headings[-1:] == ("Example",))
    assert document.text[example.start:example.end].startswith("Example\n-------")
    passages = chunk_document(document)
    assert passages[-1].indexed_text().startswith("Pagination > The Paginator class > Example\n\n")


# A Sphinx page whose table uses a substitution defined below it, nesting one only conf.py's rst_epilog
# defines (Ansible's network platform pages): docutils 0.23 raised KeyError('br') and the page was skipped.
SPHINX_EPILOG_SUBSTITUTION = """IOS Platform Options
====================

.. table::

    ====================  ==========================================
    |enable_mode|         supported: use ``ansible_become: true``
    ====================  ==========================================

.. |enable_mode| replace:: Enable Mode |br| (Privilege Escalation)

Using CLI in Ansible
--------------------

Set ``ansible_become_method: enable`` in the group variables.
"""


def test_a_rest_page_using_a_substitution_only_conf_py_defines_keeps_its_text_lines_and_sections(
        tmp_path: Path) -> None:
    (tmp_path / "platform_ios.rst").write_text(SPHINX_EPILOG_SUBSTITUTION, encoding="utf-8")
    [document] = load_documents(CorpusSpec(roots=[str(tmp_path)]))
    assert document.title == "IOS Platform Options" and document.text == SPHINX_EPILOG_SUBSTITUTION
    cli = next(s for s in document.sections if s.headings == ("Using CLI in Ansible",))
    assert document.text[cli.start:cli.end].startswith("Using CLI in Ansible\n----")


@given(names=st.lists(st.from_regex(r"[A-Za-z][\w *`-]{0,12}[A-Za-z]", fullmatch=True), min_size=1, max_size=4))
def test_stand_in_substitutions_define_exactly_the_undefined_ones(names: list[str]) -> None:
    from hexmcp.tools.knowledge.readers import _stand_in_substitutions

    text = "Title\n=====\n\n" + " ".join(f"|{name}|" for name in names) + "\n\n.. |defined| replace:: x\n"
    stand_ins = _stand_in_substitutions(text + " |defined|")
    assert "|defined|" not in stand_ins
    assert all(f".. |{name}| replace::" in stand_ins for name in names if name.lower() != "defined")



@pytest.mark.parametrize("text", [README_TXT, LOG_TXT, "", "one line\n", "x = 1\ny = 2\n"])
def test_plain_text_stays_plain(text: str) -> None:
    document = parse_text("notes/readme.txt", text, ".txt")
    assert document.media_type == "text/plain"
    assert document.title == "readme"
    assert all(s.headings == () for s in document.sections)


def test_explicit_markup_alone_makes_a_txt_file_rest() -> None:
    assert looks_like_rst("Some words.\n\n.. note::\n\n   A note.\n")
    assert looks_like_rst("See :ref:`this <a>` and :doc:`that </b>` for more.\n")
    assert not looks_like_rst("One role-like thing, :ref:`this`, is not enough.\n")
    assert not looks_like_rst("...and so it went. .. nothing here\n")


def test_the_real_django_pages_are_read_as_rest() -> None:
    pages = sorted(DJANGO.rglob("*.txt"))
    assert len(pages) > 200
    documents = [read_document(p.relative_to(DJANGO).as_posix(), p) for p in pages[:40]]
    assert all(d.media_type == "text/x-rst" for d in documents)
    assert sum(bool(s.headings) for d in documents for s in d.sections) > 100
    pagination = read_document("topics/pagination.txt", DJANGO / "topics" / "pagination.txt")
    assert pagination.title == "Pagination"
    assert ("The Paginator class",) in [s.headings for s in pagination.sections]


def test_a_txt_file_read_as_rest_keys_its_cached_vectors_apart_from_the_same_text_read_as_plain() -> None:
    as_rest = parse_text("a.txt", SPHINX_TXT, ".txt")
    as_plain = parse_plain("a.txt", SPHINX_TXT)
    assert vectors_key("model", chunk_document(as_rest)) != vectors_key("model", chunk_document(as_plain))
    assert vectors_key("model", chunk_document(as_plain)) == \
        vectors_key("model", chunk_document(parse_plain("a.txt", SPHINX_TXT)))


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1, max_size=12)
_PUNCTUATION = st.sampled_from(["", "", "", ".", ",", ";", ":", "!", "?", "'s", ")", "--", "...", "%"])
_PROSE_WORD = st.builds(lambda opening, word, mark: opening + word + mark,
                        st.sampled_from(["", "", "", "(", '"', "'"]), _WORD, _PUNCTUATION)
_PROSE_LINE = st.lists(_PROSE_WORD, min_size=1, max_size=14).map(" ".join)
_PARAGRAPH = st.lists(_PROSE_LINE, min_size=1, max_size=6).map("\n".join)
# A plain-text separator stands between blank lines: it underlines nothing.
_SEPARATOR = st.sampled_from(["----", "* * *", "=" * 40, "~~~~~~~~", "-- ", "..."])
_BLOCKS = st.lists(st.one_of(_PARAGRAPH, _PARAGRAPH, _PARAGRAPH, _SEPARATOR), min_size=1, max_size=12)


@given(blocks=_BLOCKS)
def test_plain_prose_is_never_taken_for_rest(blocks: list[str]) -> None:
    assert not looks_like_rst("\n\n".join(blocks) + "\n")


_TITLE = _PROSE_LINE.filter(lambda t: t.strip() == t and t[:1] not in "=-`:'\"~^_*+#<>.")


@given(before=st.lists(_PARAGRAPH, max_size=4), title=_TITLE, after=st.lists(_PARAGRAPH, max_size=4),
       mark=st.sampled_from(list("=-~^*+#'\"`:._")), extra=st.integers(0, 6), overline=st.booleans(),
       line_ending=st.sampled_from(["\n", "\r\n"]))
@settings(suppress_health_check=[HealthCheck.filter_too_much])
def test_an_adorned_title_makes_a_file_rest(before: list[str], title: str, after: list[str], mark: str, extra: int,
                                             overline: bool, line_ending: str) -> None:
    rule = mark * max(len(title) + extra, 3)
    heading = f"{rule}\n{title}\n{rule}" if overline else f"{title}\n{rule}"
    text = "\n\n".join([*before, heading, *after]) + "\n"
    assert len(text.splitlines()) <= SNIFF_LINES
    assert looks_like_rst(text.replace("\n", line_ending))


def test_an_underline_shorter_than_its_line_or_a_mismatched_overline_is_no_title() -> None:
    assert not looks_like_rst("A long line of text here\n=====\n\nmore\n")
    assert not looks_like_rst("=====\nTitle\n-----\n\nmore\n")
    assert not looks_like_rst("A paragraph's first line\nTitle\n=====\n\nmore\n")  # no blank line before


# --- HTML pages ---------------------------------------------------------------------------------

SPHINX_HTML = b"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>How to use sessions | Django documentation</title>
<style>body { color: red }</style><script>var tracking = "x";</script></head>
<body><header><a href="/">Django</a> docs search</header>
<nav class="toc"><ul><li><a href="#">Table of contents entry</a></li></ul></nav>
<div class="document"><div class="body" role="main">
<h1>How to use sessions<a class="headerlink" href="#how" title="Permalink">\xc2\xb6</a></h1>
<p>Django provides <em>full</em> support for
   anonymous sessions.</p>
<ul><li>first item</li><li>second <code>item</code></li></ul>
<h2>Enabling sessions<a class="headerlink" href="#en">\xc2\xb6</a></h2>
<p>Sessions are implemented via a piece of middleware.</p>
<pre>MIDDLEWARE = [
    "SessionMiddleware",
]</pre>
<h3>Using database-backed sessions</h3><p>Add the app.</p>
<h2>Configuring the engine</h2><table><tr><th>key</th><th>value</th></tr><tr><td>a</td><td>1</td></tr></table>
</div><aside>Related pages</aside></div>
<footer>&copy; Django Software Foundation</footer></body></html>
"""


def test_an_html_page_is_its_content_sectioned_by_its_headings() -> None:
    document = read_html("topics/http/sessions.html", SPHINX_HTML)
    assert document.title == "How to use sessions"
    assert document.media_type == "text/html" and served_media_type(document.media_type) == "text/plain"
    assert [s.headings for s in document.sections] == [
        ("How to use sessions",), ("How to use sessions", "Enabling sessions"),
        ("How to use sessions", "Enabling sessions", "Using database-backed sessions"),
        ("How to use sessions", "Configuring the engine")]
    text = document.text
    assert "Django provides full support for anonymous sessions." in text
    assert 'MIDDLEWARE = [\n    "SessionMiddleware",\n]' in text  # <pre> keeps its lines
    assert "key | value\na | 1" in text
    for chrome in ("tracking", "color: red", "Table of contents", "docs search", "Related pages", "Software Foundation",
                   "\u00b6"):
        assert chrome not in text
    enabling = document.sections[1]
    assert text[enabling.start:enabling.end].startswith("Enabling sessions\n\nSessions are implemented")


def test_an_html_title_comes_from_the_title_element_without_an_h1_and_else_from_the_file_name() -> None:
    assert read_html("a.html", b"<title> The  Page </title><h2>Part</h2><p>x</p>").title == "The Page"
    assert read_html("dir/some-page.htm", b"<p>text</p>").title == "some page"


def test_an_html_page_in_a_declared_charset_is_decoded_by_it() -> None:
    page = '<meta charset="iso-8859-1"><h1>Caf\u00e9</h1><p>cr\u00e8me br\u00fbl\u00e9e</p>'.encode("latin-1")
    document = read_html("cafe.html", page)
    assert document.title == "Caf\u00e9" and "cr\u00e8me br\u00fbl\u00e9e" in document.text


def test_broken_markup_gives_a_best_effort_document() -> None:
    document = read_html("broken.html", b"<div><p>unclosed <b>bold <i>x</div></b><h2>Part<h3>Sub</h2>rest of it<")
    assert "unclosed bold x" in document.text and "rest of it" in document.text
    assert any(s.headings and s.headings[0].startswith("Part") for s in document.sections)  # an h3 left in an h2


@pytest.mark.parametrize(("page", "complaint"), [
    (b"<body>" + b"<div>" * 100_000 + b"deep", "nested"),
    (b"<body>" + b"<font><b><i><u>x</p>" * 20_000, "nested"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
])
def test_hostile_html_is_a_clear_corpus_error(page: bytes, complaint: str) -> None:
    with pytest.raises(CorpusError, match=complaint):
        read_html("hostile.html", page)


def test_an_html_page_over_the_size_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(html_reader, "MAX_HTML_BYTES", 1000)
    with pytest.raises(CorpusError, match="limit"):
        read_html("big.html", b"<p>" + b"word " * 300)


def test_sloppy_but_shallow_html_is_read_whole() -> None:
    """Unclosed <p>, <li> and <a> do not nest: thousands of them are a long page, not a deep one."""
    page = b"<ul>" + b"<li><a href=x>link <p>para " * 5_000
    assert html_reader.nesting_estimate(page) < 5
    assert read_html("sloppy.html", page).text.count("para") == 5_000


def test_a_corpus_with_html_pages_reads_them_and_skips_a_hostile_one(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_bytes(SPHINX_HTML)
    (tmp_path / "site" / "deep.htm").write_bytes(b"<div>" * 50_000)
    (tmp_path / "notes.txt").write_text(SPHINX_TXT)
    documents = {d.document_id: d for d in load_documents(CorpusSpec(roots=[tmp_path]))}
    assert sorted(documents) == ["notes.txt", "site/index.html"]
    assert documents["site/index.html"].title == "How to use sessions"
    assert documents["notes.txt"].title == "Pagination"


def test_an_html_page_and_its_markdown_source_are_one_page() -> None:
    assert page_key("guide/install.html") == page_key("guide/install.md")


_TAGS = st.sampled_from(["div", "p", "span", "b", "a", "h1", "h2", "h3", "li", "ul", "table", "tr", "td", "pre",
                         "script", "style", "nav", "section", "br", "code", "h7", "x-y"])
_PIECE = st.one_of(
    _TAGS.map(lambda t: f"<{t}>"), _TAGS.map(lambda t: f"</{t}>"), st.text(max_size=12),
    st.sampled_from(["<!--", "-->", "<", ">", "&amp;", "&#0;", "<![CDATA[", "\x00", "\ufffd", "<p class='x", '"']))


@given(pieces=st.lists(_PIECE, max_size=60))
@settings(max_examples=200, deadline=None)
def test_any_tag_soup_reads_into_exact_sections_or_a_corpus_error(pieces: list[str]) -> None:
    try:
        document = read_html("soup.html", "".join(pieces).encode("utf-8", errors="surrogatepass"))
    except CorpusError:
        return
    for section in document.sections:
        assert 0 <= section.start < section.end <= len(document.text)
        assert document.text[section.start:section.end].strip()
    for passage in chunk_document(document):
        assert document.text[passage.start:passage.end] == passage.text


@given(data=st.binary(max_size=400))
@settings(max_examples=200, deadline=None)
def test_any_bytes_read_into_a_document_or_a_corpus_error(data: bytes) -> None:
    try:
        document = read_html("junk.html", data)
    except CorpusError:
        return
    assert isinstance(document.text, str)


def test_a_reload_parses_only_the_files_whose_bytes_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hexmcp.tools.knowledge import corpus

    (tmp_path / "a.txt").write_text(SPHINX_TXT)
    (tmp_path / "b.md").write_text("# B\n\nbee\n")
    parsed: list[str] = []
    real = corpus.parse_file
    monkeypatch.setattr(corpus, "parse_file", lambda i, s, d: parsed.append(i) or real(i, s, d))
    spec = CorpusSpec(roots=[tmp_path])
    first = load_documents(spec)
    assert sorted(parsed) == ["a.txt", "b.md"]
    (tmp_path / "b.md").write_text("# B\n\nbuzz\n")  # the same size: only the bytes tell
    second = load_documents(spec)
    assert sorted(parsed) == ["a.txt", "b.md", "b.md"]
    assert second[0] is first[0] and "buzz" in second[1].text
    assert [d.document_id for d in load_documents(CorpusSpec(roots=[tmp_path], exclude=["*.md"]))] == ["a.txt"]


def test_a_meta_charset_that_cannot_be_true_is_ignored_and_a_content_type_one_is_read() -> None:
    assert read_html("a.html", '<meta charset="utf-16"><h1>Caf\u00e9</h1>'.encode()).title == "Caf\u00e9"
    page = b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252"><h1>Caf\xe9 \x93q\x94</h1>'
    assert read_html("b.html", page).title == "Caf\u00e9 \u201cq\u201d"


# --- reST markup cleaned from what is indexed -------------------------------------------------------

def test_rest_markup_is_cleaned_from_what_is_indexed_and_kept_in_what_is_cited() -> None:
    from hexmcp.tools.knowledge.rst_markup import clean_rst

    assert clean_rst("See :doc:`the tutorial </intro/tutorial01>` and :setting:`MIDDLEWARE`.") == \
        "See the tutorial and MIDDLEWARE."
    assert clean_rst("Use :class:`~django.core.paginator.Paginator` or ``Page``.") == \
        "Use django.core.paginator.Paginator or Page."
    assert clean_rst(".. _paginator-class:\n\nTitle\n=====\n\n.. versionadded:: 5.1\n\n   :synopsis: Sessions.\n") == \
        "\nTitle\n\n5.1\n\nSessions.\n"
    assert clean_rst("A list of objects::\n\n    >>> p = 1\n") == "A list of objects:\n\n    >>> p = 1\n"
    document = parse_text("topics/pagination.txt", SPHINX_TXT, ".txt")
    for passage in chunk_document(document):
        assert passage.text == document.text[passage.start:passage.end]  # cited as written
        assert passage.indexed_text().endswith(passage.body_text())
        assert "``" not in passage.indexed_text() and ":class:" not in passage.indexed_text()
        assert "=====" not in passage.indexed_text() and ".. _paginator-class" not in passage.indexed_text()
    # Markdown's own markup (code spans, links) is indexed as written: only MDX's syntax is cleaned (ADR 0607)
    markdown = chunk_document(parse_text("a.md", "# A\n\nSee `code` and [a link](b.md).\n", ".md"))
    assert all(p.indexed_body is None and p.indexed_text().endswith(p.text) for p in markdown)


def test_a_long_rest_passage_is_windowed_over_its_cleaned_body() -> None:
    from hexmcp.tools.knowledge.windows import passage_windows

    body = "\n".join(f":ref:`word{i} <target-{i}>`" for i in range(900))  # docutils refuses lines over 10,000
    document = parse_text("long.txt", f"Long\n====\n\n{body}\n", ".txt")
    passage, = chunk_document(document, max_chars=50_000)

    def offsets(text: str) -> list[tuple[int, int]]:  # a word a token
        import re

        return [m.span() for m in re.finditer(r"\S+", text)]

    windows = passage_windows(passage, offsets, 300)
    assert windows[0] == passage.indexed_text() and len(windows) > 2
    for window in windows[1:]:
        assert window.startswith("Long\n\n") and ":ref:" not in window and "<target" not in window
    assert windows[-1].rstrip().endswith("word899")


def _laughs(levels: int) -> str:
    """YAML front matter whose `title` aliases nine lists of nine aliases `levels` deep (9**levels strings)."""
    names = [chr(ord("a") + i) for i in range(levels + 1)]
    rows = [f'{names[0]}: &{names[0]} ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    rows += [f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]" for previous, name in zip(names, names[1:])]
    return "---\n" + "\n".join(rows) + f"\ntitle: *{names[-1]}\n---\n# Body\n\nThe page's text.\n"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("front", [_laughs(10), "---\ntitle: " + "[" * 50_000 + "]" * 50_000 + "\n---\n# Body\n\ntext\n"],
                         ids=["billion laughs", "50,000 deep"])
def test_hostile_front_matter_is_ignored_and_the_page_read(front: str) -> None:
    """The title of "billion laughs" front matter was str()-ed: billions of items, a parse that never ended
    (bench/corpus_probes.py); PyYAML's recursion on deep nesting was not a YAMLError and lost the page."""
    from hexmcp.tools.knowledge.readers import parse_markdown

    document = parse_markdown("p.md", front)
    assert document.title == "Body" and [s.headings for s in document.sections] == [("Body",)]


@pytest.mark.parametrize("page", ["".join("   " * i + f"level{i}\n\n" for i in range(500)),
                                  "".join("  " * i + f"- level{i}\n\n" for i in range(1000))],
                         ids=["block quotes 500 deep", "lists 1,000 deep"])
def test_rest_nested_past_docutils_recursion_is_read_as_plain_text(page: str) -> None:
    from hexmcp.tools.knowledge.readers import parse_text

    document = parse_text("deep.rst", page, ".rst")
    assert document.media_type == "text/plain" and document.text == page
    assert "level499" in " ".join(p.text for p in chunk_document(document))
