"""A change batch re-reads and re-indexes only what it names, and the result is what a full re-read and a
full rebuild give: the same documents, skipped files, index version, passages, BM25 scores and answers."""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexmcp.tools.knowledge.builder import DocumentMemo, build_index
from hexmcp.tools.knowledge.corpus import CorpusSpec, SkippedFile, load_documents
from hexmcp.tools.knowledge.corpus_reader import CorpusReader
from hexmcp.tools.knowledge.fusion import Method
from hexmcp.tools.knowledge.lexical import LexicalIndex
from tests.tools.knowledge.exact_store import ExactStore

FOLDERS = ("", "guide", "guide/deep", "v1", "v2", "v1/guide", "v2/guide", "build", ".hidden", "node_modules")
NAMES = ("a.md", "b.rst", "c.txt", "page.md")
WORDS = ("install", "configure", "server", "client", "token", "vector", "upgrade", "release", "cache", "watch")
QUERIES = ("install server", "vector cache", "upgrade release notes", "watch token")


class HashEmbedder:
    """Deterministic vectors from a text's digest: the build's bookkeeping without a model."""

    model_key = "hash-test"
    dimension = 8
    token_offsets = None

    def __init__(self) -> None:
        self.embedded = 0

    def embed(self, text: str) -> np.ndarray:
        raw = np.frombuffer(hashlib.sha256(text.encode()).digest()[:32], dtype=np.uint8)[: self.dimension]
        vector = raw.astype(np.float32) - 127.5
        return vector / np.linalg.norm(vector)

    def submit_many(self, texts: list[str], *, passages: int | None = None) -> concurrent.futures.Future:
        self.embedded += len(texts)
        future: concurrent.futures.Future = concurrent.futures.Future()
        future.set_result(np.stack([self.embed(t) for t in texts]) if texts else
                          np.zeros((0, self.dimension), dtype=np.float32))
        return future


def _text(words: list[int], heading: bool) -> bytes:
    body = " ".join(WORDS[w] for w in words) or "empty"
    return (f"# {WORDS[words[0] % len(WORDS)] if words else 'Title'}\n\n{body}\n" if heading else body + "\n").encode()


_FOLDER = st.sampled_from(FOLDERS)
_FILE = st.tuples(_FOLDER, st.sampled_from(NAMES))
OPERATIONS = st.one_of(
    st.tuples(st.just("write"), _FILE, st.lists(st.integers(0, len(WORDS) - 1), max_size=12), st.booleans()),
    st.tuples(st.just("binary"), _FILE),
    st.tuples(st.just("delete"), _FILE),
    st.tuples(st.just("rename"), _FILE, _FILE),
    st.tuples(st.just("rmtree"), _FOLDER, st.booleans()),
    st.tuples(st.just("move_folder"), _FOLDER, st.sampled_from(("moved", "guide/moved", "v3", "build/moved"))),
    st.tuples(st.just("copy_version"), st.sampled_from(("v1", "v2")), st.sampled_from(("v3", "v4"))),
    st.tuples(st.just("gitignore"), st.sampled_from(("", "guide")), st.sampled_from(("build/\n", "*.txt\n", "v2/\n", ""))),
)


def _files_under(path: Path) -> list[str]:
    return [os.path.join(folder, name) for folder, _, names in os.walk(path) for name in names]


def _apply(root: Path, operation: tuple) -> set[str]:
    """Do one operation on the tree; the paths a watcher would report for it (absolute)."""
    kind = operation[0]
    if kind in ("write", "binary"):
        folder, name = operation[1]
        path = root / folder / name
        made = [str(p) for p in (path.parent, *path.parent.parents) if not p.exists() and p.is_relative_to(root)]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_text(operation[2], operation[3]) if kind == "write" else b"\x00\x01\x02binary\x00" * 8)
        return {str(path), *made}
    if kind == "delete":
        path = root / operation[1][0] / operation[1][1]
        if path.is_file():
            path.unlink()
        return {str(path)}
    if kind == "rename":
        source, target = root / operation[1][0] / operation[1][1], root / operation[2][0] / operation[2][1]
        if not source.is_file() or target.exists() and not target.is_file():
            return set()
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)
        return {str(source), str(target)}
    if kind == "rmtree":
        folder = root / operation[1]
        if not operation[1] or not folder.is_dir():
            return set()
        inside = _files_under(folder)
        shutil.rmtree(folder)
        return {str(folder), *(inside if operation[2] else ())}  # a watcher may name the folder alone
    if kind == "move_folder":
        source, target = root / operation[1], root / operation[2]
        if not operation[1] or not source.is_dir() or target.exists() or target.is_relative_to(source):
            return set()
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)
        return {str(source), str(target)}  # a move names the folders only, never what they hold
    if kind == "copy_version":
        source, target = root / operation[1], root / operation[2]
        if not source.is_dir() or target.exists():
            return set()
        shutil.copytree(source, target)
        return {str(target)}
    folder = root / operation[1]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".gitignore").write_text(operation[2])
    return {str(folder / ".gitignore")}


def _full_read(spec: CorpusSpec) -> tuple[dict[str, str], list[SkippedFile]]:
    skipped: list[SkippedFile] = []
    return {d.document_id: d.text for d in load_documents(spec, skipped)}, skipped


def _answers(index) -> list:
    return [[(h.passage.passage_id, round(h.score, 6), h.copies) for h in index.search_passages(q, 5, method=method)]
            for q in QUERIES for method in (Method.LEXICAL, Method.HYBRID)] + \
           [[(h.document.document_id, h.version, h.copies) for h in index.search_documents(q, 5)] for q in QUERIES]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=st.lists(OPERATIONS, max_size=6), steps=st.lists(st.lists(OPERATIONS, min_size=1, max_size=3),
                                                              min_size=1, max_size=5))
def test_reading_and_indexing_what_changed_gives_what_a_full_rebuild_gives(first: list, steps: list) -> None:
    embedder = HashEmbedder()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "docs"
        root.mkdir()
        (root / "index.md").write_text("# Home\n\ninstall the server\n")
        (root / ".gitignore").write_text("build/\n")
        for operation in first:
            _apply(root, operation)
        spec = CorpusSpec(roots=[root])
        reader, memo, store = CorpusReader(spec), DocumentMemo(), ExactStore(embedder.dimension)
        reader.read_all()
        index = build_index(list(reader.documents.values()), embedder, store, memo=memo)
        for batch in steps:
            changed: set[str] = set()
            for operation in batch:
                changed |= _apply(root, operation)
            before = reader.documents
            local = reader.read_changed(changed)
            if not local:
                reader.read_all()
            assert local or any(p.endswith(".gitignore") for p in changed)
            texts, skipped = _full_read(spec)
            assert {i: d.text for i, d in reader.documents.items()} == texts
            assert list(reader.documents) == sorted(texts) and reader.skipped == skipped
            # The index as the service re-indexes it: only removed and changed documents leave the store.
            for document_id in before:
                if reader.documents.get(document_id) is not before[document_id]:
                    store.delete_document(document_id)
            stored = {i for i, d in reader.documents.items() if before.get(i) is d}
            index = build_index(list(reader.documents.values()), embedder, store, memo=memo, stored=stored,
                                previous=index)
            fresh = build_index(load_documents(spec), HashEmbedder(), ExactStore(embedder.dimension))
            assert index.version == fresh.version
            assert [p.passage_id for p in index.passages] == [p.passage_id for p in fresh.passages]
            assert sorted(store.rows) == sorted(fresh._store.rows)
            assert _answers(index) == _answers(fresh)
            assert index._place == fresh._place  # places kept for unchanged documents, worked out for the rest


def test_kept_terms_give_the_scores_stemming_everything_gives() -> None:
    texts = ["Installing the server", "", "the and of", "Configure caches; configured caching", "tokens, tokenizer"]
    whole = LexicalIndex(texts)
    reused = LexicalIndex(texts + ["a new server page"], [*whole.terms, None])
    alone = LexicalIndex(texts + ["a new server page"])
    for query in ("install servers", "caching", "token", "page"):
        assert np.array_equal(reused.scores(query), alone.scores(query))
    assert np.array_equal(LexicalIndex(["the", "a"]).scores("the"), np.zeros(2, dtype=np.float32))


def test_a_batch_that_names_a_rule_file_or_a_root_is_read_whole(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\ntext\n")
    reader = CorpusReader(CorpusSpec(roots=[tmp_path]))
    assert not reader.read_changed([str(tmp_path / "a.md")])  # nothing read yet: the first read is whole
    reader.read_all()
    assert reader.read_changed([str(tmp_path / "a.md")])
    assert not reader.read_changed([str(tmp_path / ".gitignore")])
    assert not reader.read_changed([str(tmp_path / "sub" / ".gitignore")])
    assert not reader.read_changed([str(tmp_path)])
    assert not reader.read_changed([str(tmp_path.parent / "elsewhere.md")])


def test_a_symlinked_page_follows_its_target(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "page.md").write_text("# Page\n\nfirst words\n")
    (tmp_path / "alias.md").symlink_to(tmp_path / "shared" / "page.md")
    reader = CorpusReader(CorpusSpec(roots=[tmp_path]))
    reader.read_all()
    (tmp_path / "shared" / "page.md").write_text("# Page\n\nsecond words\n")
    assert reader.read_changed([str(tmp_path / "shared" / "page.md")])  # the watcher names the target only
    assert "second" in reader.documents["alias.md"].text and "second" in reader.documents["shared/page.md"].text


# --- a real watcher ---------------------------------------------------------------------------------

@pytest.mark.anyio
async def test_a_watched_corpus_follows_each_kind_of_change_as_a_full_rebuild_would(
        tmp_path: Path, knowledge_cache: Path, embedder) -> None:
    from hexmcp.tools.knowledge.service import KnowledgeConfig, KnowledgeService

    root = tmp_path / "docs"
    for name, text in {"guide/install.md": "# Install\n\nRun the installer.\n", "v1/guide/upgrade.md":
                       "# Upgrade\n\nUpgrading from release one.\n", "notes.txt": "Plain notes on caching.\n",
                       ".gitignore": "build/\n", "build/out.md": "# Built\n\nGenerated output.\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    spec = CorpusSpec(roots=[root])
    service = KnowledgeService(KnowledgeConfig(corpus=spec, cache_dir=knowledge_cache))
    await service.start()
    stop = asyncio.Event()
    watching = asyncio.ensure_future(service.watch(stop))

    last = service.reads.copy()  # the reads counted when the previous change had settled

    async def settled(how: str) -> None:
        fresh = build_index(load_documents(spec), embedder, ExactStore(embedder.dimension), cache_dir=knowledge_cache)
        async with asyncio.timeout(30):
            while service._index.version != fresh.version:
                await asyncio.sleep(0.05)
        assert service.reads[how] > last[how], (how, service.reads, last)  # read by its paths, or whole
        last.clear()
        last.update(service.reads)
        index = service._index
        assert {i: d.text for i, d in service.documents.items()} == {i: d.text for i, d in fresh.documents.items()}
        assert [p.passage_id for p in index.passages] == [p.passage_id for p in fresh.passages]
        assert [[h.document.document_id for h in index.search_documents(q, 5)] for q in QUERIES] == \
               [[h.document.document_id for h in fresh.search_documents(q, 5)] for q in QUERIES]

    try:
        async with asyncio.timeout(30):  # armed: a watch arms, then reads the corpus once, whole
            while service.reads["whole"] <= last["whole"]:
                await asyncio.sleep(0.05)
        last.update(service.reads)
        (root / "guide/install.md").write_text("# Install\n\nRun the installer, then configure the server.\n")
        await settled("changed")  # an edit
        (root / "guide/cache.md").write_text("# Cache\n\nThe vector cache keeps embeddings.\n")
        await settled("changed")  # an add
        (root / "notes.txt").unlink()
        await settled("changed")  # a delete
        (root / "guide/cache.md").rename(root / "guide/caching.md")
        await settled("changed")  # a rename
        (root / "reference").mkdir()
        (root / "reference/api.md").write_text("# API\n\nThe client token API.\n")
        await settled("changed")  # a new folder
        shutil.copytree(root / "v1", root / "v2")
        (root / "v2/guide/upgrade.md").write_text("# Upgrade\n\nUpgrading from release one, now to two.\n")
        await settled("changed")  # a versioned copy added: the page's copies regroup
        assert service._index.pages.copies("v1/guide/upgrade.md") == ("v2/guide/upgrade.md",)
        shutil.rmtree(root / "v2")
        await settled("changed")  # ... and removed
        assert service._index.pages.copies("v1/guide/upgrade.md") == ()
        (root / ".gitignore").write_text("")
        await settled("whole")  # a rule change: read whole, the build folder comes in
        assert "build/out.md" in service.documents
    finally:
        stop.set()
        await asyncio.wait_for(watching, 10)
