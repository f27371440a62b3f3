"""Translations in sibling language folders: one page per translated page, answered in the corpus's main
language, and folders that are merely named like languages left apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from exact_store import ExactStore
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.tools.knowledge.builder import build_index
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.languages import Translations, language_of
from hexmcp.tools.knowledge.passages import SourceDocument
from hexmcp.tools.knowledge.versions import PageCatalog

PAGES = ("concepts/pods.md", "concepts/services.md", "tasks/debug.md", "tasks/scale.md", "index.md")


def _document(document_id: str, text: str = "") -> SourceDocument:
    return SourceDocument(document_id=document_id, title=document_id, text=text or f"text of {document_id}",
                          media_type="text/markdown", sections=())


@pytest.mark.parametrize(("segment", "expected"), [
    ("en", "en"), ("zh-cn", "zh-cn"), ("zh_CN", "zh-cn"), ("pt-BR", "pt-br"), ("zh-hans", "zh-hans"),
    ("docs", None), ("api", None), ("ml", None), ("io", None), ("v1", None), ("e", None), ("english", None),
])
def test_a_language_folder_is_named_by_a_common_language_tag(segment: str, expected: str | None) -> None:
    assert language_of(segment) == expected


def test_mirrored_language_folders_make_one_page_per_translated_page_in_the_main_language() -> None:
    documents = [_document(f"content/en/docs/{p}") for p in PAGES]
    documents += [_document(f"content/zh-cn/docs/{p}") for p in PAGES[:4]]
    documents += [_document(f"content/fr/docs/{p}") for p in PAGES[:3]]
    documents += [_document("content/en/blog/news.md"), _document("about.md")]
    catalog = PageCatalog(documents)

    page = catalog.page("content/fr/docs/tasks/debug.md")
    assert page.preferred == "content/en/docs/tasks/debug.md"  # the language with the most documents answers
    assert set(page.documents) == {f"content/{tag}/docs/tasks/debug.md" for tag in ("en", "zh-cn", "fr")}
    assert catalog.page("content/zh-cn/docs/tasks/scale.md").documents == (
        "content/en/docs/tasks/scale.md", "content/zh-cn/docs/tasks/scale.md")
    assert catalog.page("content/en/docs/index.md").documents == ("content/en/docs/index.md",)
    assert catalog.page("content/en/blog/news.md").documents == ("content/en/blog/news.md",)
    assert catalog.page("about.md").documents == ("about.md",)


def test_the_main_language_is_the_one_with_most_documents_even_when_it_is_not_english() -> None:
    documents = [_document(f"docs/ja/{p}") for p in PAGES] + [_document(f"docs/en/{p}") for p in PAGES[:3]]
    assert PageCatalog(documents).page("docs/en/tasks/debug.md").preferred == "docs/ja/tasks/debug.md"


def test_folders_named_like_languages_that_do_not_mirror_each_other_stay_apart() -> None:
    # `es` (ECMAScript) and `it` (integration tests) beside each other: one shared index.md is no mirror.
    documents = [_document(f"guide/es/{name}.md") for name in ("modules", "classes", "async", "index")]
    documents += [_document(f"guide/it/{name}.md") for name in ("setup", "fixtures", "teardown", "index")]
    catalog = PageCatalog(documents)
    assert not catalog.translations
    assert catalog.page("guide/es/index.md").documents == ("guide/es/index.md",)
    # A language folder alone (no sibling language) is no translation either.
    assert not Translations(["docs/fr/a.md", "docs/fr/b.md", "docs/fr/c.md", "docs/api/a.md"])


def test_versions_inside_language_folders_prefer_the_main_language_then_the_newest_release() -> None:
    documents = [_document(f"site/{tag}/{version}/{p}") for tag in ("en", "de") for version in ("v1", "v2")
                 for p in PAGES]
    documents += [_document(f"site/en/v3/{p}") for p in PAGES]
    page = PageCatalog(documents).page("site/de/v1/tasks/debug.md")
    assert page.documents[0] == "site/en/v3/tasks/debug.md"
    assert set(page.documents) == {f"site/{tag}/{v}/tasks/debug.md" for tag, v in
                                   [("en", "v1"), ("en", "v2"), ("en", "v3"), ("de", "v1"), ("de", "v2")]}


@given(translated=st.lists(st.sampled_from(PAGES), unique=True), tag=st.sampled_from(["fr", "zh-cn", "pt-br", "ko"]))
def test_every_translation_joins_its_page_and_no_two_source_pages_merge(translated, tag) -> None:
    documents = [_document(f"docs/en/{p}") for p in PAGES] + [_document(f"docs/{tag}/{p}") for p in translated]
    catalog = PageCatalog(documents)
    for page in PAGES:  # the source pages stay distinct, each answered by its English copy
        assert catalog.page(f"docs/en/{page}").preferred == f"docs/en/{page}"
    mirrored = len(translated) >= 3
    for page in translated:
        assert (catalog.page(f"docs/{tag}/{page}").preferred == f"docs/en/{page}") == mirrored


@pytest.mark.slow
def test_search_answers_each_page_once_in_the_main_language(tmp_path: Path, embedder) -> None:
    english = {
        "pods.md": "# Pods\n\nA pod runs containers. Use `kubectl get pods` to list pods in a namespace.\n",
        "logs.md": "# Logs\n\nRead a container's output with `kubectl logs my-pod --previous` after a crash.\n",
        "scale.md": "# Scaling\n\nChange the replica count with `kubectl scale deployment/web --replicas=3`.\n",
    }
    other = {
        "fr": {"pods.md": "# Pods\n\nUn pod exécute des conteneurs. `kubectl get pods` liste les pods.\n",
               "logs.md": "# Journaux\n\nLisez la sortie avec `kubectl logs my-pod --previous` après un plantage.\n",
               "scale.md": "# Mise à l'échelle\n\n`kubectl scale deployment/web --replicas=3` change le nombre.\n"},
        "zh-cn": {"pods.md": "# Pod\n\nPod 运行容器。使用 `kubectl get pods` 列出 pods。\n",
                  "logs.md": "# 日志\n\n崩溃后使用 `kubectl logs my-pod --previous` 读取输出。\n",
                  "scale.md": "# 扩缩\n\n使用 `kubectl scale deployment/web --replicas=3` 更改副本数。\n"},
    }
    for tag, pages in [("en", english), *other.items()]:
        for name, text in pages.items():
            (tmp_path / tag / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / tag / name).write_text(text, encoding="utf-8")
    index = build_index(load_documents(CorpusSpec(roots=[tmp_path])), embedder, ExactStore(embedder.dimension))
    hits = index.search_documents("kubectl logs --previous after the container crashed", 3)
    assert hits[0].document.document_id == "en/logs.md"
    assert len(hits) == 3 and all(h.document.document_id.startswith("en/") for h in hits)  # three pages, in English
    assert set(hits[0].copies) == {"fr/logs.md", "zh-cn/logs.md"}
    passages = index.search_passages("kubectl logs --previous after the container crashed", 3)
    assert passages[0].passage.document_id == "en/logs.md"
    assert all(p.passage.document_id.startswith("en/") for p in passages)  # no translated section beside them
    chinese = index.search_passages("kubectl logs --previous", 3, path="zh-cn/")  # asked for: translations answer
    assert chinese and all(p.passage.document_id.startswith("zh-cn/") for p in chinese)


def test_a_re_index_that_changes_the_main_language_reorders_every_translated_page() -> None:
    documents = [_document(f"docs/en/{p}") for p in PAGES] + [_document(f"docs/ja/{p}") for p in PAGES[:4]]
    first = PageCatalog(documents)
    assert first.page("docs/ja/tasks/debug.md").preferred == "docs/en/tasks/debug.md"
    grown = [d for d in documents if not d.document_id.startswith("docs/en/concepts/")]
    grown += [_document(f"docs/ja/{p}") for p in ("index.md", "guide/a.md", "guide/b.md")]
    after = PageCatalog(grown, previous=first)  # Japanese now has the most documents
    assert after.page("docs/en/tasks/debug.md").preferred == "docs/ja/tasks/debug.md"
    assert after.page("docs/en/tasks/debug.md") == PageCatalog(grown).page("docs/en/tasks/debug.md")
