"""Concepts are explained from where they are defined: the evidence that says where (glossary entries,
plain-text titles, definition sentences), how strongly each passage defines a concept, and copies of a
page (other versions) counted once."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.tools.concepts.base import Support
from hexmcp.tools.concepts.defining import fold_copies
from hexmcp.tools.concepts.extraction import extract, heading_terms
from hexmcp.tools.concepts.glossary_entries import named_term
from hexmcp.tools.concepts.model import EvidenceKind
from hexmcp.tools.concepts.plain_titles import plain_titles
from hexmcp.tools.concepts.text import ACRONYM, STOP_WORDS, initials_of
from hexmcp.tools.knowledge.chunking import chunk_document
from hexmcp.tools.knowledge.readers import parse_text

words = st.text(alphabet=string.ascii_lowercase, min_size=3, max_size=9).filter(lambda w: w not in STOP_WORDS)
titles = st.lists(words, min_size=1, max_size=4).map(lambda ws: " ".join(ws).capitalize())


def evidence_of(document_id: str, text: str) -> list:
    document = parse_text(document_id, text, "." + document_id.rsplit(".", 1)[1])
    return list(extract(document, chunk_document(document)))


@given(title=titles, rule=st.sampled_from("=-~^*#"), extra=st.integers(0, 5), overline=st.booleans(),
       body=st.text(alphabet=string.ascii_letters + " .,\n", max_size=200))
def test_an_underlined_line_is_a_title_and_nothing_else_is(title: str, rule: str, extra: int, overline: bool,
                                                           body: str) -> None:
    line = rule * (len(title) + extra)
    text = f"Intro text.\n\n{line + chr(10) if overline else ''}{title}\n{line}\n\n{body}"
    found = list(plain_titles(text))
    assert [t.text for t in found] == [title]
    assert text[found[0].start:found[0].end] == title
    assert list(plain_titles(body)) == []  # no rule line, no title


def test_a_rule_shorter_than_its_line_underlines_nothing() -> None:
    assert list(plain_titles("Savepoints and more\n-----\n\ntext")) == []


@given(terms=st.lists(titles, min_size=1, max_size=6, unique_by=str.lower))
@settings(deadline=None)
def test_every_term_of_a_sphinx_glossary_is_an_entry_where_it_stands(terms: list[str]) -> None:
    block = "".join(f"    {term}\n        What {term.lower()} means, in a sentence.\n\n" for term in terms)
    text = f"========\nTerms\n========\n\nSome words first.\n\n.. glossary::\n\n{block}Text after the block.\n"
    entries = [e for e in evidence_of("notes.txt", text) if e.kind is EvidenceKind.ENTRY]
    assert [e.term for e in entries] == terms
    assert all(text[e.start:e.start + len(e.term)] == e.term for e in entries)


def test_a_glossary_folder_page_is_one_entry_and_its_parenthesis_an_alias() -> None:
    text = "---\ntitle: RBAC (Role-Based Access Control)\nid: rbac\n---\nManages authorization decisions.\n"
    entries = [e for e in evidence_of("reference/glossary/rbac.md", text) if e.kind is EvidenceKind.ENTRY]
    assert [(e.term, e.alias) for e in entries] == [("RBAC", "Role-Based Access Control")]
    assert not [e for e in evidence_of("reference/rbac.md", text) if e.kind is EvidenceKind.ENTRY]


@given(parts=st.lists(words, min_size=2, max_size=6), joiner=st.sampled_from([" ", "-", " / "]))
def test_initials_are_the_first_letters_of_the_significant_words(parts: list[str], joiner: str) -> None:
    name = joiner.join(parts)
    assert initials_of(name) == "".join(p[0] for p in parts).upper()
    assert ACRONYM.match(initials_of(name)) and initials_of(parts[0]) == ""


def test_a_markdown_glossary_file_lists_entries_and_a_glossary_page_its_other_names() -> None:
    text = ("# Glossary\n\n## Widget\n\nThe unit of work.\n\nState file\n: Where widgets live.\n\n"
            "- **Snapshot**: a copy of the state file.\n")
    assert {e.term for e in evidence_of("docs/glossary.md", text) if e.kind is EvidenceKind.ENTRY} == {
        "Widget", "State file", "Snapshot"}
    page = "---\ntitle: Pod\naka:\n- pods\n- Workload unit\n---\nThe smallest deployable unit.\n"
    entries = [e for e in evidence_of("reference/glossary/pod.md", page) if e.kind is EvidenceKind.ENTRY]
    assert {(e.term, e.alias) for e in entries} == {("Pod", None), ("Pod", "pods"), ("Pod", "Workload unit")}


def test_titles_and_roles_name_terms() -> None:
    assert named_term(":term:`view <glossary-view>` layer") == ("view layer", None)
    assert heading_terms("`automock` \\[boolean]") == [("automock", 1.0)]
    assert heading_terms("Front matter {#front-matter}") == [("Front matter", 1.0)]


def test_definition_sentences_and_page_titles_are_evidence() -> None:
    text = ("---\ntitle: Using Widgets\n---\n\nA savepoint is a marker within a transaction.\n\n"
            "Docblock pragmas are comments that start a file. Mock functions are also known as \"spies\", "
            "because they spy.\n\nThis is a sentence about nothing.\n")
    found = evidence_of("guide/widgets.md", text)
    definitions = {(e.term, e.alias) for e in found if e.kind is EvidenceKind.DEFINITION}
    assert definitions == {("savepoint", None), ("Docblock pragmas", None), ("Mock functions", "spies")}
    titled = {e.term for e in found if e.kind is EvidenceKind.HEADING and e.titles_page}
    assert {"Using Widgets", "Widgets"} <= titled


@given(rows=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.floats(0, 1), st.integers(0, 5)),
                     min_size=1, max_size=20))
def test_folding_keeps_one_passage_per_place_the_preferred_copy_with_the_strongest_evidence(rows) -> None:
    """(place, copy rank, strength, mentions) rows: copy rank 0 is the preferred version of the page."""
    from hexmcp.tools.knowledge.passages import Passage

    made = []
    for number, (spot, rank, strength, mentions) in enumerate(rows):
        passage = Passage(passage_id=f"p{number}", document_id=f"v{rank}/page{spot}.md", title="t", headings=(),
                          start=0, end=1, text="x")
        made.append(Support(passage=passage, mentions=mentions, defines=strength > 0, strength=strength))
    place = {s.passage.passage_id: (spot,) for s, (spot, *_rest) in zip(made, rows)}
    preference = {f"v{rank}/page{spot}.md": rank for spot, rank, *_rest in rows}
    folded = fold_copies(made, place, preference)
    assert sorted(place[s.passage.passage_id] for s in folded) == sorted(set(place.values()))
    for row in folded:
        copies = [s for s in made if place[s.passage.passage_id] == place[row.passage.passage_id]]
        assert row.strength == max(s.strength for s in copies) and row.mentions == max(s.mentions for s in copies)
        assert preference[row.passage.document_id] == min(preference[s.passage.document_id] for s in copies)


VERSIONED = {
    "glossary/widget.md": "---\ntitle: Widget\n---\nA widget is the unit of work the daemon schedules.\n",
    "guide/scheduling.md": ("# Scheduling\n\nThe daemon runs every widget in turn. A widget waits, a widget runs, a widget "
                            "stops; each widget reports when the widget finishes, and widget logs name the widget.\n"),
    "guide/rendering.md": "# SSR\n\nThe server renders each page to HTML before it sends it to the browser.\n",
    **{f"docs/{version}/storage.md": ("# Storage\n\nStorage keeps state on disk. Widgets are stored there. "
                                      f"This is release {version}.\n") for version in ("v1.0", "v2.0", "v3.0")},
}


@pytest.mark.slow
def test_a_concept_is_explained_from_its_glossary_entry_and_copies_count_once(tmp_path, embedder) -> None:
    from hexmcp.tools.concepts.build import build_concept_base
    from hexmcp.tools.concepts.explain import explain
    from hexmcp.tools.concepts.glossary import Glossary
    from hexmcp.tools.concepts.resolver import resolve
    from hexmcp.tools.knowledge.builder import build_index, new_store
    from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents

    from tests.tools.concepts.conftest import write_corpus

    index = build_index(load_documents(CorpusSpec(roots=[write_corpus(tmp_path, VERSIONED)])), embedder,
                        new_store(embedder.dimension))
    base = build_concept_base(index.documents, index.passages, index.version, Glossary(),
                              embed_many=embedder.embed_many, dimension=embedder.dimension,
                              embed_query=index.embed_query, nearest_passages=index.nearest_passages, pages=index.pages)
    found = resolve(base, "Widgets")  # plural, other case: the same concept
    assert found.resolved and found.best is not None
    passages = explain(base, found.best.concept_id, 5).passages
    assert passages[0].passage.document_id == "glossary/widget.md"  # not the page naming it most
    pages = [index.pages.page(p.passage.document_id).key for p in passages]
    assert len(pages) == len(set(pages))  # the three versions of storage.md show once
    storage = [p.passage.document_id for p in passages if "storage" in p.passage.document_id]
    assert storage in ([], ["docs/v3.0/storage.md"])  # and as the newest version
    rendering = resolve(base, "server-side rendering")  # written nowhere: the acronym's letters find it
    assert rendering.best is not None and rendering.best.concept_id == "ssr" and rendering.resolved
