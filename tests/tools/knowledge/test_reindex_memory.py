"""A re-index hands state on to the next (BM25 terms, the places of unchanged documents): many re-indexes in a row
must free each replaced index and hold no more objects than a few did."""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path

from hexmcp.tools.embedding.background_thread import run_in_background
from hexmcp.tools.knowledge.builder import DocumentMemo, build_index
from hexmcp.tools.knowledge.corpus import CorpusSpec
from hexmcp.tools.knowledge.corpus_reader import CorpusReader
from hexmcp.tools.knowledge.fusion import Method
from tests.tools.knowledge.exact_store import ExactStore
from tests.tools.knowledge.test_knowledge_incremental import HashEmbedder


def _write_corpus(root: Path, pages: int) -> list[Path]:
    paths = []
    for n in range(pages):
        path = root / f"part{n % 4}" / f"page{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Page {n}\n\nHow to configure the cache number {n}.\n\n## Details\n\nMiddleware order {n}.\n")
        paths.append(path)
    return paths


def test_re_indexing_many_times_frees_each_replaced_index_and_holds_no_more_objects(tmp_path: Path) -> None:
    """Each replaced index is freed and the objects the process holds stop growing (40 re-indexes end where 10
    did)."""
    root = tmp_path / "docs"
    pages = _write_corpus(root, 60)
    embedder, memo, store = HashEmbedder(), DocumentMemo(), ExactStore(HashEmbedder.dimension)
    reader = CorpusReader(CorpusSpec(roots=[root]))
    reader.read_all()

    async def reindex(index, n: int):
        page = pages[n % len(pages)]
        page.write_text(f"# Page {n}\n\nEdited: ocelot{n} configure.\n")
        before = reader.documents
        reader.read_changed({str(page)})
        for document_id in before:
            if reader.documents.get(document_id) is not before[document_id]:
                store.delete_document(document_id)
        stored = frozenset(i for i, d in reader.documents.items() if before.get(i) is d)
        return await run_in_background(lambda: build_index(list(reader.documents.values()), embedder, store,
                                                           memo=memo, stored=stored, previous=index))

    async def run() -> tuple[list[int], list[weakref.ref]]:
        index = await run_in_background(lambda: build_index(list(reader.documents.values()), embedder, store, memo=memo))
        replaced, held = [], []
        for n in range(40):
            replaced.append(weakref.ref(index))
            index = await reindex(index, n)
            if n in (9, 39):
                held.append(len(gc.get_objects()))
        hit = index.search_passages("ocelot39", 1, method=Method.LEXICAL)[0]
        assert hit.passage.document_id == pages[39 % 60].relative_to(root).as_posix()
        return held, replaced

    held, replaced = asyncio.run(run())
    gc.collect()
    assert all(ref() is None for ref in replaced)
    assert held[1] <= held[0] * 1.02, held  # 30 more re-indexes: no more than noise
