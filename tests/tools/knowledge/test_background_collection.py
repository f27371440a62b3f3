"""The collector around background work (tools/embedding/background_collection.py): no full collection while
a job runs, survivors frozen after it, and memory that does not grow across many re-indexes for it."""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path

from hexmcp.tools.embedding import background_collection
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


def test_what_a_job_leaves_alive_is_frozen_at_its_end() -> None:
    frozen_before = gc.get_freeze_count()
    kept: list[object] = []

    async def run() -> None:
        await asyncio.gather(*(run_in_background(lambda: kept.append([object()])) for _ in range(3)))

    asyncio.run(run())
    assert len(kept) == 3
    assert gc.get_freeze_count() > frozen_before


def test_re_indexing_many_times_frees_each_replaced_index_and_holds_no_more_objects(tmp_path: Path) -> None:
    """Each replaced index is freed (by reference counting: it is frozen when replaced), the objects the
    process holds, frozen or not, stop growing (40 re-indexes end where 10 did), and no full collection is
    run for it."""
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
                held.append(len(gc.get_objects()) + gc.get_freeze_count())
        hit = index.search_passages("ocelot39", 1, method=Method.LEXICAL)[0]
        assert hit.passage.document_id == pages[39 % 60].relative_to(root).as_posix()
        return held, replaced

    full_before = background_collection.full_collections
    held, replaced = asyncio.run(run())
    assert all(ref() is None for ref in replaced)
    # The valve runs a full collection once per THAW_EVERY_JOBS jobs, not after every re-index (judged on the
    # frozen count at a job's end, with the old and new index both alive, it ran one each time).
    assert background_collection.full_collections - full_before <= 41 // background_collection.THAW_EVERY_JOBS + 1
    assert held[1] <= held[0] * 1.02, held  # 30 more re-indexes: no more than noise


class _Cyclic:
    def __init__(self) -> None:
        self.me = self
        self.payload = list(range(1000))


def test_cycles_left_frozen_by_jobs_are_reclaimed_once_they_grow() -> None:
    """A job whose garbage is cyclic and old enough to escape the young collections (it reaches the oldest
    generation while the job runs) is frozen at the job's end; the next job's start collects such garbage
    once per THAW_EVERY_JOBS jobs, so it stays bounded however many jobs run."""
    alive: weakref.WeakSet[_Cyclic] = weakref.WeakSet()

    def job() -> None:
        made = [_Cyclic() for _ in range(200)]
        alive.update(made)
        gc.collect(1)  # promoted to the oldest generation while alive: only a full collection can free them
        made.clear()  # now cyclic garbage

    async def run() -> None:
        for _ in range(300):
            await run_in_background(job)

    full_before = background_collection.full_collections
    asyncio.run(run())
    assert background_collection.full_collections > full_before
    # 60,000 made; at most THAW_EVERY_JOBS jobs' worth is alive.
    assert len(alive) <= 200 * background_collection.THAW_EVERY_JOBS, len(alive)
