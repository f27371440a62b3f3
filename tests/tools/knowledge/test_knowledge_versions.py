"""Versioned copies and mirrors: grouped into pages, the newest preferred, filters by version and path,
and search results that name each page once."""

from __future__ import annotations

from pathlib import Path

import pytest
from exact_store import ExactStore
from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.tools.knowledge.builder import build_index
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.passages import SourceDocument
from hexmcp.tools.knowledge.versions import PageCatalog, label_matches, path_matches, split_path, version_rank


def _document(document_id: str, text: str, title: str = "") -> SourceDocument:
    return SourceDocument(document_id=document_id, title=title or document_id, text=text, media_type="text/markdown",
                          sections=())


@pytest.mark.parametrize(("path", "expected"), [
    ("docs/v1/guide.md", ("docs", "guide", "v1")),
    ("docs/latest/guide.md", ("docs", "guide", "latest")),
    ("docs/specification/2025-06-18/basic/lifecycle.mdx", ("docs/specification", "basic/lifecycle", "2025-06-18")),
    ("docs/specification/draft/basic/lifecycle.md", ("docs/specification", "basic/lifecycle", "draft")),
    ("website/versioned_docs/version-29.7/Configuration.md", ("website/docs", "Configuration", "version-29.7")),
    ("guide/1.x/setup.rst", ("guide", "setup", "1.x")),
    ("release-1.28/notes.txt", ("", "notes", "release-1.28")),
    ("chapter/2/intro.md", ("", "chapter/2/intro", None)),  # a bare number is a chapter, not a version
    ("releases/5.0.txt", ("", "releases/5.0", None)),  # the file name itself is never the version
    ("v1.md", ("", "v1", None)),
])
def test_a_path_splits_into_folders_page_and_version(path: str, expected: tuple) -> None:
    assert split_path(path) == expected


def test_versions_rank_unreleased_below_releases_below_the_newest_alias() -> None:
    ordered = ["draft", "next", "v1", "v1.10", "2.0", "latest"]
    assert sorted(ordered, key=version_rank) == ["draft", "next", "v1", "v1.10", "2.0", "latest"]
    assert version_rank("2025-06-18") > version_rank("2024-11-05")
    assert version_rank("v1.10") > version_rank("v1.9")


@pytest.mark.parametrize(("label", "wanted", "matches"), [
    ("version-29.7", "29.7", True), ("v29.7", "29.7", True), ("29.7", "v29.7", True), ("29.7", "29", True),
    ("29.x", "29", True), ("2025-06-18", "2025-06-18", True), ("Draft", "draft", True),
    ("29.7", "2", False), ("30.0", "29", False), (None, "29", False), ("v1", "v10", False),
])
def test_a_version_filter_matches_its_labels(label, wanted, matches) -> None:
    assert label_matches(label, wanted) is matches


def test_a_path_filter_is_a_folder_prefix_or_a_glob() -> None:
    assert path_matches("docs/api/a.md", "docs/api")
    assert path_matches("docs/api/a.md", "docs/api/")
    assert not path_matches("docs/apis/a.md", "docs/api")
    assert path_matches("docs/api/deep/a.md", "docs/*.md")
    assert not path_matches("docs/api/a.mdx", "docs/*.md")


BODY = "Configure the cache directory, the workers and the reporters for every project in the repository. "


def test_docusaurus_copies_group_with_the_unreleased_root_and_the_newest_release_answers() -> None:
    catalog = PageCatalog([
        _document("docs/Configuration.md", BODY + "A new option."),
        _document("website/versioned_docs/version-29.7/Configuration.md", BODY),
        _document("website/versioned_docs/version-30.0/Configuration.md", BODY + "Another."),
        _document("docs/Other.md", "Something else entirely about snapshot files and their format."),
    ])
    page = catalog.page("docs/Configuration.md")
    assert page.preferred == "website/versioned_docs/version-30.0/Configuration.md"
    assert page.documents[1:] == ("website/versioned_docs/version-29.7/Configuration.md", "docs/Configuration.md")
    assert catalog.label("docs/Configuration.md") == "next"
    assert catalog.page("docs/Other.md").documents == ("docs/Other.md",)


def test_a_configured_version_answers_for_its_pages() -> None:
    documents = [_document(f"spec/{v}/lifecycle.mdx", BODY + v) for v in ("2024-11-05", "2025-06-18", "draft")]
    assert PageCatalog(documents).page("spec/draft/lifecycle.mdx").preferred == "spec/2025-06-18/lifecycle.mdx"
    assert PageCatalog(documents, "draft").page("spec/2024-11-05/lifecycle.mdx").preferred == "spec/draft/lifecycle.mdx"


def test_mirrors_and_identical_texts_are_one_page_and_look_alike_paths_are_not() -> None:
    catalog = PageCatalog([
        _document("guide/setup.md", BODY), _document("guide/setup.mdx", BODY + "More."),
        _document("mirror/copy-of-setup.md", BODY),
        _document("main/index.md", "Welcome to the command line tool: flags, exit codes, shell completion."),
        _document("index.md", "Release notes for every version, newest first, with upgrade steps."),
    ])
    assert set(catalog.page("guide/setup.md").documents) == {"guide/setup.md", "guide/setup.mdx",
                                                             "mirror/copy-of-setup.md"}
    assert catalog.page("guide/setup.md").preferred == "guide/setup.md"
    assert catalog.page("main/index.md").documents == ("main/index.md",)
    assert catalog.page("index.md").documents == ("index.md",)


def test_the_version_filter_keeps_unversioned_pages_and_one_version_of_the_others() -> None:
    catalog = PageCatalog([
        _document("docs/v1/guide.md", BODY + "one"), _document("docs/v2/guide.md", BODY + "two"),
        _document("docs/v1/removed.md", "A feature dropped in the second version: the legacy importer."),
        _document("docs/faq.md", "Questions people ask about licences and support."),
    ])
    ids = ["docs/v1/guide.md", "docs/v2/guide.md", "docs/v1/removed.md", "docs/faq.md"]
    assert catalog.admitted(ids, "v1", None) == {"docs/v1/guide.md", "docs/v1/removed.md", "docs/faq.md"}
    assert catalog.admitted(ids, "2", None) == {"docs/v2/guide.md", "docs/faq.md"}
    assert catalog.admitted(ids, None, "docs/v2") == {"docs/v2/guide.md"}


VERSIONS = st.lists(st.sampled_from(["v1", "v2", "v2.1", "1.x", "2024-11-05", "2025-06-18", "draft", "latest"]),
                    min_size=1, max_size=5, unique=True)


@given(pages=st.lists(st.tuples(st.from_regex(r"[a-z]{3,8}", fullmatch=True), VERSIONS), min_size=1, max_size=6,
                      unique_by=lambda p: p[0]))
def test_every_page_s_copies_form_one_group_and_distinct_pages_never_merge(pages) -> None:
    documents = [_document(f"docs/{version}/{name}.md", f"{name} " * 20 + BODY + f"{version} {index}")
                 for index, (name, versions) in enumerate(pages) for version in versions]
    catalog = PageCatalog(documents)
    for name, versions in pages:
        group = catalog.page(f"docs/{versions[0]}/{name}.md")
        assert set(group.documents) == {f"docs/{v}/{name}.md" for v in versions}
        newest = max(versions, key=version_rank)
        if any(len(v) > 1 for _, v in pages):  # a version folder is one that holds copies of some page
            assert version_rank(group.labels[group.preferred]) == version_rank(newest)


CORPUS = {
    "docs/v1/backups.md": "# Backups\n\nRun `tool dump` to copy the database to a file every night. See also: v1.\n",
    "docs/v2/backups.md": "# Backups\n\nRun `tool dump` to copy the database to a file every night. See also: v2.\n",
    "docs/v3/backups.md": "# Backups\n\nRun `tool dump` to copy the database to a file every night. See also: v3.\n",
    "docs/v1/install.md": "# Install\n\nDownload the package and unpack it into /opt. See also: v1.\n",
    "docs/v2/install.md": "# Install\n\nDownload the package and unpack it into /opt. See also: v2.\n",
    "docs/v3/install.md": "# Install\n\nDownload the package and unpack it into /opt. See also: v3.\n",
    "docs/weather.md": "# Weather\n\nThe forecast says rain and wind tomorrow.\n",
}


@pytest.fixture
def versioned_index(tmp_path: Path, embedder):
    for name, text in CORPUS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    documents = load_documents(CorpusSpec(roots=[tmp_path]))
    return build_index(documents, embedder, ExactStore(embedder.dimension))


@pytest.mark.slow
def test_search_names_each_page_once_from_its_newest_copy(versioned_index) -> None:
    hits = versioned_index.search_documents("how do I copy my database to a file", 3)
    assert [h.document.document_id for h in hits][:2] == ["docs/v3/backups.md", "docs/v3/install.md"]
    assert hits[0].version == "v3" and hits[0].copies == ("docs/v2/backups.md", "docs/v1/backups.md")
    assert len({versioned_index.pages.page(h.document.document_id).key for h in hits}) == len(hits)
    plain = versioned_index.search_documents("how do I copy my database to a file", 3, distinct=False)
    assert sum(h.document.document_id.endswith("/backups.md") for h in plain) >= 2  # what distinct pages avoid


@pytest.mark.slow
def test_the_version_and_path_filters_confine_both_searches(versioned_index) -> None:
    hits = versioned_index.search_documents("copy the database to a file", 5, version="v1")
    assert {h.document.document_id for h in hits} <= {"docs/v1/backups.md", "docs/v1/install.md", "docs/weather.md"}
    assert hits[0].document.document_id == "docs/v1/backups.md"
    passages = versioned_index.search_passages("copy the database", 5, path="docs/v2")
    assert passages and all(p.passage.document_id.startswith("docs/v2/") for p in passages)
    # No copy is labelled v9: only the page kept in one version (weather) qualifies.
    assert {h.document.document_id for h in versioned_index.search_documents("database", 5, version="v9")} <= {
        "docs/weather.md"}


@pytest.mark.slow
def test_passages_of_copies_answer_once(versioned_index) -> None:
    hits = versioned_index.search_passages("unpack the package into /opt", 5)
    places = [(versioned_index.pages.page(h.passage.document_id).key, h.passage.headings) for h in hits]
    assert len(places) == len(set(places))
    assert hits[0].passage.document_id == "docs/v3/install.md"
    assert set(hits[0].copies) == {"docs/v1/install.md", "docs/v2/install.md"}


def test_the_docs_version_flag_reaches_the_service_config() -> None:
    import argparse

    from hexmcp.tools.knowledge.flags import add_knowledge_flags, knowledge_config

    parser = argparse.ArgumentParser()
    add_knowledge_flags(parser.add_argument_group("knowledge tools"))
    assert knowledge_config(parser.parse_args(["--docs-version", "2.1"])).preferred_version == "2.1"
    assert knowledge_config(parser.parse_args([])).preferred_version is None


@pytest.mark.slow
def test_a_configured_version_answers_for_the_page_in_search(tmp_path: Path, embedder) -> None:
    for name, text in CORPUS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    index = build_index(load_documents(CorpusSpec(roots=[tmp_path])), embedder, ExactStore(embedder.dimension),
                        preferred_version="v1")
    best = index.search_documents("how do I copy my database to a file", 1)[0]
    assert best.document.document_id == "docs/v1/backups.md" and best.version == "v1"


# Paths where copies meet: version folders (numbered, dated, aliases, Docusaurus's tree and its unreleased root),
# mirrored suffixes, unversioned roots, and look-alike paths; and a corpus without versions (a re-index then groups
# only what a change touches). Few of each, so that changes keep landing on the same pages.
_VERSIONED = ("docs", "docs/v1", "docs/2.0", "docs/draft", "website/versioned_docs/version-1.0", "mirror")
_UNVERSIONED = ("docs", "docs/api", "guide", "mirror", "api", "docs/guide")
# Language folders that come to mirror each other (or not) as changes land, with versions inside one of them.
_TRANSLATED = ("docs/en", "docs/fr", "docs/zh-cn", "docs/en/v1", "docs", "mirror")
_NAMES = ("intro", "guide/intro")
_SUFFIXES = (".md", ".mdx")
# Texts: near-identical (versions drift), one shared exactly, a distinct one, and empty (many files share it).
_TEXTS = (BODY, BODY + "A new option.", BODY + "Another.", "Release notes, newest first, with upgrade steps.", "")
_TITLES = ("", "Setup", "Introduction")
_PATH = st.tuples(st.integers(0, len(_VERSIONED) - 1), st.sampled_from(_NAMES), st.sampled_from(_SUFFIXES))
# A change names a path, or (an integer) one of the documents the corpus holds, so that edits and deletions
# keep landing on pages that have copies.
_TARGET = st.one_of(_PATH, st.integers(0, 50))
_CHANGE = st.one_of(
    st.tuples(st.just("write"), _TARGET, st.integers(0, len(_TEXTS) - 1), st.integers(0, len(_TITLES) - 1)),
    st.tuples(st.just("delete"), _TARGET),
    st.tuples(st.just("touch"), _TARGET),  # the same text in a new document object (a file saved unchanged)
)


def _catalogue(catalog: PageCatalog, document_ids: list[str]) -> tuple:
    """All a catalogue answers: each document's page (key, copies in order, labels), and the version labels."""
    pages = {d: (catalog.page(d).key, catalog.page(d).documents, catalog.page(d).labels) for d in document_ids}
    return pages, catalog.version_labels


@pytest.mark.parametrize("folders", [_VERSIONED, _UNVERSIONED, _TRANSLATED])
@settings(max_examples=1000, deadline=None)
@given(start=st.lists(_CHANGE, max_size=25), batches=st.lists(st.lists(_CHANGE, min_size=1, max_size=4), max_size=6),
       preferred=st.lists(st.sampled_from([None, None, None, "v1", "draft"]), min_size=7, max_size=7),
       order=st.randoms(use_true_random=False))
def test_a_catalogue_built_from_the_previous_one_is_the_one_built_afresh(folders, start, batches, preferred,
                                                                         order) -> None:
    """A re-index builds its catalogue from the last one, taking over what unchanged documents gave; through any
    additions, deletions, edits and unchanged saves, in any corpus order, it equals a fresh build's."""
    corpus: dict[str, SourceDocument] = {}
    catalog: PageCatalog | None = None
    for step, batch in enumerate([start, *batches]):
        for change in batch:
            if isinstance(change[1], tuple):
                path = f"{folders[change[1][0]]}/{change[1][1]}{change[1][2]}"
            elif corpus:
                path = sorted(corpus)[change[1] % len(corpus)]
            else:
                continue
            if change[0] == "write":
                corpus[path] = _document(path, _TEXTS[change[2]], _TITLES[change[3]])
            elif change[0] == "delete":
                corpus.pop(path, None)
            elif path in corpus:
                old = corpus[path]
                corpus[path] = _document(path, old.text, old.title)
        documents = list(corpus.values())
        if order.random() < 0.5:  # a re-index's snapshots list documents in another order than the last index
            order.shuffle(documents)
        catalog = PageCatalog(documents, preferred[step], catalog)
        ids = [d.document_id for d in documents]
        assert _catalogue(catalog, ids) == _catalogue(PageCatalog(documents, preferred[step]), ids)


def test_a_copy_deleted_then_written_again_is_grouped_as_a_fresh_build_groups_it() -> None:
    """A key's recorded split outlives a deleted copy (splits are checked against the documents when used); the
    copy written again must not be looked up among the previous catalogue's documents (found by the property
    test above: a KeyError)."""
    page, mirror = _document("docs/api/guide/intro.md", BODY, "Setup"), _document("docs/api/guide/intro.mdx", BODY, "Setup")
    other = _document("guide/other.md", "Release notes, newest first, with upgrade steps.")
    first = PageCatalog([page, mirror, other])
    second = PageCatalog([page, other], previous=first)
    again = [page, _document("docs/api/guide/intro.mdx", BODY + "A new option."), other]
    third = PageCatalog(again, previous=second)
    ids = [d.document_id for d in again]
    assert _catalogue(third, ids) == _catalogue(PageCatalog(again), ids)
