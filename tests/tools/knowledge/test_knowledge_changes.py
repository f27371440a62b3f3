"""A changed corpus while serving: resources follow, subscribers hear of it, search sees it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import threading
from pathlib import Path

import pytest

from hexmcp.core import McpServer
from hexmcp.core.registrar import Registrar
from hexmcp.tools.knowledge.corpus import CorpusSpec
from hexmcp.tools.knowledge.mcp_tools import register_knowledge_tools
from hexmcp.tools.knowledge.service import KnowledgeConfig, resource_uri
from tests.support.peer import CoreClient, RecordingPeer

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def served(corpus_dir: Path, knowledge_cache: Path, embedder):
    server = McpServer("kb-test", "0")
    service = register_knowledge_tools(Registrar(server), KnowledgeConfig(corpus=CorpusSpec(roots=[corpus_dir]),
                                                                          cache_dir=knowledge_cache))
    return server, service, CoreClient(server, RecordingPeer())


async def _uris(client: CoreClient) -> set[str]:
    return {r["uri"] for r in (await client.ok("resources/list"))["resources"]}


async def test_edits_additions_and_removals_reach_resources_and_subscribers(served, corpus_dir: Path) -> None:
    server, service, client = served
    await client.initialize()
    weather = resource_uri("notes/weather.txt")
    await client.ok("resources/subscribe", {"uri": weather})
    await service.start()

    (corpus_dir / "notes/weather.txt").write_text("Snow is expected over the mountain passes.\n")
    (corpus_dir / "notes/cooking.rst").unlink()
    (corpus_dir / "notes/garden.md").write_text("# Garden\n\nWater the tomatoes every evening.\n")
    change = await service.reload()

    assert (change.added, change.removed, change.modified) == (("notes/garden.md",), ("notes/cooking.rst",),
                                                               ("notes/weather.txt",))
    assert [n["uri"] for n in client.peer.notified("notifications/resources/updated")] == [weather]
    assert client.peer.notified("notifications/resources/list_changed")
    uris = await _uris(client)
    assert resource_uri("notes/garden.md") in uris and resource_uri("notes/cooking.rst") not in uris
    read = await client.ok("resources/read", {"uri": weather})
    assert "Snow" in read["contents"][0]["text"]
    found = await client.ok("tools/call", {"name": "searchPassages", "arguments": {"query": "watering tomato plants"}})
    assert found["structuredContent"]["items"][0]["documentId"] == "notes/garden.md"


async def test_builds_and_manual_re_indexes_each_run_on_one_long_lived_thread(served, corpus_dir: Path,
                                                                            monkeypatch) -> None:
    """The first build and every watched change's re-index run on the service's build thread, and every
    indexDocuments call on its re-index thread (ADR 0615): a thread made per build would leave what it freed
    in a malloc arena of its own."""
    from hexmcp.tools.knowledge import builder

    server, service, client = served
    threads: list[threading.Thread] = []
    build_index = builder.build_index

    def recorded(*args, **kwargs):
        threads.append(threading.current_thread())
        return build_index(*args, **kwargs)

    monkeypatch.setattr(builder, "build_index", recorded)
    await client.initialize()
    await service.start()
    (corpus_dir / "notes/weather.txt").write_text("Fog lies over the harbour until noon.\n")
    await service.reload()
    for text in ("Prune the roses in March.", "Mulch the beds in autumn."):
        (corpus_dir / "notes/garden.md").write_text(f"# Garden\n\n{text}\n")
        called = await client.ok("tools/call", {"name": "indexDocuments", "arguments": {"path": "notes/"}})
        assert not called.get("isError") and called["structuredContent"]["documents"] >= 1, called

    # first build, the change; then per call the change it re-read and its own re-embedding
    names = [thread.name for thread in threads]
    assert names == ["hexmcp-index"] * 3 + ["hexmcp-reindex"] + ["hexmcp-index", "hexmcp-reindex"], names
    assert len({t for t in threads if t.name == "hexmcp-index"}) == 1
    assert len({t for t in threads if t.name == "hexmcp-reindex"}) == 1


async def _completed(client: CoreClient, value: str, argument: str = "path") -> dict:
    return (await client.ok("completion/complete", {"ref": {"type": "ref/resource", "uri": "hexmcp://docs/{path}"},
                                                    "argument": {"name": argument, "value": value}}))["completion"]


async def test_the_document_template_completes_paths_and_follows_the_corpus(served, corpus_dir: Path) -> None:
    """A client filling in `hexmcp://docs/{path}` is offered document ids: by prefix first, then by a folder
    or file name (typed without its folders), case ignored; what a change adds or removes is offered or not."""
    server, service, client = served
    await client.initialize()
    assert (await _completed(client, "guide"))["values"] == []  # nothing read yet: nothing offered, nothing started
    await service.start()
    assert await _completed(client, "") == {"values": sorted(service.documents), "total": len(service.documents),
                                             "hasMore": False}
    assert (await _completed(client, "Guide/S"))["values"] == ["guide/storage.md"]
    assert (await _completed(client, "co"))["values"] == ["notes/cooking.rst"]  # a file name, no folder typed
    assert (await _completed(client, "guide", argument="uri"))["values"] == []  # the template has no such argument
    (corpus_dir / "notes/cooking.rst").unlink()
    (corpus_dir / "notes/compost.md").write_text("# Compost\n\nTurn the heap every week.\n")
    await service.reload()
    assert (await _completed(client, "co"))["values"] == ["notes/compost.md"]
    read = await client.ok("resources/read", {"uri": "hexmcp://docs/" + (await _completed(client, "comp"))["values"][0]})
    assert "Turn the heap" in read["contents"][0]["text"]


async def test_the_first_read_is_announced_once_and_an_unchanged_corpus_notifies_nobody(served) -> None:
    server, service, client = served
    await client.initialize()
    assert await _uris(client) == set()  # documents are parsed after start-up, not when the service is made
    await service.ensure_documents()
    assert len(client.peer.notified("notifications/resources/list_changed")) == 1  # all documents, one notice
    assert len(await _uris(client)) == len(service.documents) > 1
    assert not await service.reload()
    assert len(client.peer.notified("notifications/resources/list_changed")) == 1


async def test_the_watcher_picks_up_a_saved_file(served, corpus_dir: Path) -> None:
    server, service, client = served
    await client.initialize()
    await client.ok("resources/subscribe", {"uri": resource_uri("guide/install.md")})
    await service.start()
    whole = service.reads["whole"]
    stop = asyncio.Event()
    watching = asyncio.ensure_future(service.watch(stop))
    try:
        await until(lambda: service.reads["whole"] > whole)  # armed: a watch arms, then reads the corpus once
        (corpus_dir / "guide/install.md").write_text("# Installing\n\nUse the installer.\n")
        async with asyncio.timeout(30):
            while not client.peer.notified("notifications/resources/updated"):
                await asyncio.sleep(0.1)
    finally:
        stop.set()
        await asyncio.wait_for(watching, 10)


async def test_list_documents_pages_with_the_cores_cursor(corpus_dir: Path, knowledge_cache: Path, embedder) -> None:
    from hexmcp.core import ServerOptions

    server = McpServer("kb-test", "0", options=ServerOptions(page_size=3))
    config = KnowledgeConfig(corpus=CorpusSpec(roots=[corpus_dir]), cache_dir=knowledge_cache,
                             url_base="https://example.org/repo/blob/main/")
    register_knowledge_tools(Registrar(server), config)
    client = CoreClient(server, RecordingPeer())
    await client.initialize()
    first = (await client.ok("tools/call", {"name": "listDocuments", "arguments": {}}))["structuredContent"]
    assert len(first["documents"]) == 3 and first["nextCursor"]
    second = (await client.ok("tools/call", {"name": "listDocuments",
                                             "arguments": {"cursor": first["nextCursor"]}}))["structuredContent"]
    ids = [d["id"] for d in first["documents"] + second["documents"]]
    assert ids == sorted(ids) and len(set(ids)) == 4 and "nextCursor" not in second
    assert second["documents"][0]["url"] == "https://example.org/repo/blob/main/" + ids[3]
    bad = await client.refused_arguments({"name": "listDocuments", "arguments": {"cursor": "!!"}})
    assert "cursor" in bad.message.lower()


async def test_fetch_takes_a_document_id_too(served) -> None:
    server, service, client = served
    await client.initialize()
    answer = await client.ok("tools/call", {"name": "fetch", "arguments": {"id": "notes/cooking.rst"}})
    document = answer["structuredContent"]
    assert document["text"] == service.documents["notes/cooking.rst"].text
    assert document["metadata"]["offsets"] == {"start": 0, "end": len(document["text"])}



class _CountingStore:
    """The real in-process store, recording each write: (operation, document ids it touched)."""

    def __init__(self, dimension: int) -> None:
        from hexmcp.tools.knowledge.vectors import MemoryVectorStore

        self.inner = MemoryVectorStore(dimension)
        self.dimension = dimension
        self.writes: list[tuple[str, frozenset[str]]] = []

    def upsert(self, passage_ids, vectors, document_ids) -> None:
        self.writes.append(("upsert", frozenset(document_ids)))
        self.inner.upsert(passage_ids, vectors, document_ids)

    def delete_document(self, document_id: str) -> None:
        self.writes.append(("delete_document", frozenset({document_id})))
        self.inner.delete_document(document_id)

    def search(self, query, limit, **filters):
        return self.inner.search(query, limit, **filters)

    def __len__(self) -> int:
        return len(self.inner)


@pytest.fixture
def opened_stores(monkeypatch) -> list[_CountingStore]:
    """Every store the knowledge service opens, counting its writes."""
    from hexmcp.tools.knowledge import builder

    opened: list[_CountingStore] = []

    def open_counting(dimension: int, spec: str = "memory") -> _CountingStore:
        opened.append(_CountingStore(dimension))
        return opened[-1]

    monkeypatch.setattr(builder, "new_store", open_counting)
    return opened


async def test_a_reindex_writes_only_the_changed_documents_to_the_kept_store(served, corpus_dir: Path,
                                                                            opened_stores) -> None:
    server, service, client = served
    await client.initialize()
    await service.start()
    [store] = opened_stores
    assert {doc for _op, docs in store.writes for doc in docs} == set(service.documents)  # first build: all
    store.writes.clear()

    (corpus_dir / "notes/weather.txt").write_text("Snow is expected over the mountain passes.\n")
    (corpus_dir / "notes/cooking.rst").unlink()
    (corpus_dir / "notes/garden.md").write_text("# Garden\n\nWater the tomatoes every evening.\n")
    await service.reload()

    assert opened_stores == [store]  # the same store, updated in place
    assert sorted((op, tuple(docs)) for op, docs in store.writes) == [
        ("delete_document", ("notes/cooking.rst",)), ("delete_document", ("notes/weather.txt",)),
        ("upsert", ("notes/garden.md",)), ("upsert", ("notes/weather.txt",))]
    assert len(store.inner) == len((await service.index()).passages)  # no row of a removed or old version
    found = await client.ok("tools/call", {"name": "searchPassages", "arguments": {"query": "snow in the mountains"}})
    assert found["structuredContent"]["items"][0]["documentId"] == "notes/weather.txt"


async def test_the_first_build_and_every_reindex_run_on_one_build_thread(served, corpus_dir: Path,
                                                                          monkeypatch) -> None:
    """What a re-index keeps of the index before it was allocated by that build's thread: all of a service's
    builds run on one long-lived thread, so they reuse one malloc arena (ADR 0615), not a new thread's each."""
    import threading

    from hexmcp.tools.embedding.background_thread import in_background
    from hexmcp.tools.knowledge import builder

    server, service, client = served
    real_build, threads = builder.build_index, []

    def recorded_build(*args, **kwargs):
        threads.append((threading.current_thread(), in_background()))  # the object: an ident can be reused
        return real_build(*args, **kwargs)

    monkeypatch.setattr(builder, "build_index", recorded_build)
    await client.initialize()
    await service.start()
    for text in ("Snow is expected.\n", "Rain is expected.\n", "Fog is expected.\n"):
        (corpus_dir / "notes/weather.txt").write_text(text)
        await service.reload()
    assert len(threads) == 4 and len(set(threads)) == 1, threads
    assert threads[0][0] is not threading.current_thread() and threads[0][1]
    found = await client.ok("tools/call", {"name": "searchPassages", "arguments": {"query": "fog"}})
    assert found["structuredContent"]["items"][0]["documentId"] == "notes/weather.txt"


async def test_a_failed_reindex_does_not_lock_a_folder_store_out_of_the_next(corpus_dir: Path, knowledge_cache: Path,
                                                                             embedder, tmp_path: Path,
                                                                             monkeypatch) -> None:
    pytest.importorskip("qdrant_client")
    from hexmcp.tools.knowledge import builder

    server = McpServer("kb-test", "0")
    service = register_knowledge_tools(Registrar(server), KnowledgeConfig(
        corpus=CorpusSpec(roots=[corpus_dir]), cache_dir=knowledge_cache,
        vector_store=f"qdrant+path:{tmp_path / 'qdrant'}"))  # a store that locks its folder while open
    client = CoreClient(server, RecordingPeer())
    await client.initialize()
    await service.start()
    real_build = builder.build_index

    def failing_build(*args, **kwargs):
        raise RuntimeError("the embedder fell over")

    monkeypatch.setattr(builder, "build_index", failing_build)
    (corpus_dir / "notes/garden.md").write_text("# Garden\n\nWater the tomatoes every evening.\n")
    with pytest.raises(RuntimeError, match="fell over"):
        await service.reload()
    monkeypatch.setattr(builder, "build_index", real_build)
    (corpus_dir / "notes/garden.md").write_text("# Garden\n\nWater the tomatoes every single evening.\n")
    await service.reload()  # opens the folder again: the failed build's store is closed, not left locking it
    found = await client.ok("tools/call", {"name": "searchPassages", "arguments": {"query": "watering tomato plants"}})
    assert found["structuredContent"]["items"][0]["documentId"] == "notes/garden.md"



@contextlib.asynccontextmanager
async def watched(root: Path, knowledge_cache: Path):
    """A service over `root`, indexed, its watcher armed; the watcher task is yielded too, and stopped after."""
    from hexmcp.tools.knowledge.service import KnowledgeService

    (root / "a.md").write_text("# A\n\nThe first page.\n")
    service = KnowledgeService(KnowledgeConfig(corpus=CorpusSpec(roots=[root]), cache_dir=knowledge_cache))
    await service.start()
    whole = service.reads["whole"]
    stop = asyncio.Event()
    watching = asyncio.ensure_future(service.watch(stop))
    try:
        await until(lambda: service.reads["whole"] > whole)  # armed: a watch arms, then reads the corpus once
        yield service, watching
    finally:
        stop.set()
        await asyncio.wait_for(watching, 10)


async def until(condition, seconds: float = 30) -> None:
    async with asyncio.timeout(seconds):
        while not condition():
            await asyncio.sleep(0.1)


async def test_a_page_written_after_the_first_read_and_before_the_watch_is_served(tmp_path: Path,
                                                                                  knowledge_cache: Path) -> None:
    """A file written between a read of the corpus and the arming of the watch is named by no event: it was
    missed until another change named it (an edit while the server started; a root made again and written to
    at once, which a loaded CI machine hit). Every watch now arms before its catch-up read."""
    from hexmcp.tools.knowledge.service import KnowledgeService

    (tmp_path / "a.md").write_text("# A\n\nThe first page.\n")
    service = KnowledgeService(KnowledgeConfig(corpus=CorpusSpec(roots=[tmp_path]), cache_dir=knowledge_cache))
    await service.start()
    assert set(service.documents) == {"a.md"}
    (tmp_path / "b.md").write_text("# B\n\nWritten before anything watched the folder.\n")
    stop = asyncio.Event()
    watching = asyncio.ensure_future(service.watch(stop))
    try:
        await until(lambda: set(service.documents) == {"a.md", "b.md"}, seconds=15)  # no event will ever name b.md
    finally:
        stop.set()
        await asyncio.wait_for(watching, 10)


async def test_the_watcher_follows_a_root_deleted_and_made_again(tmp_path: Path, knowledge_cache: Path) -> None:
    """watchfiles loses a deleted root's watch and never sees the folder made again in its place
    (bench/corpus_probes.py, group watch): the server kept serving the deleted folder's pages forever."""
    docs = tmp_path / "docs"
    docs.mkdir()
    async with watched(docs, knowledge_cache) as (service, watching):
        shutil.rmtree(docs)
        await asyncio.sleep(1.5)
        assert set(service.documents) == {"a.md"} and not watching.done()  # the last corpus serves meanwhile
        docs.mkdir()
        (docs / "b.md").write_text("# B\n\nWritten while the folder was back but unwatched.\n")
        await until(lambda: set(service.documents) == {"b.md"})
        (docs / "c.md").write_text("# C\n\nWritten into the folder watched again.\n")
        await until(lambda: set(service.documents) == {"b.md", "c.md"})


async def test_the_watcher_follows_a_root_deleted_and_made_again_at_once(tmp_path: Path, knowledge_cache: Path) -> None:
    """A root deleted and made again before watchfiles hands over the batch (it debounces for over a second)
    exists when the batch is read, often under the same inode, but its watch is dead: the deletion of the
    root itself in the batch is what says so. Checking only that the roots exist missed it (a slow machine
    turned the test above into this case)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    async with watched(docs, knowledge_cache) as (service, watching):
        shutil.rmtree(docs)
        docs.mkdir()
        (docs / "b.md").write_text("# B\n\nWritten at once into the folder made again.\n")
        await until(lambda: set(service.documents) == {"b.md"})
        (docs / "c.md").write_text("# C\n\nWritten into the folder watched again.\n")
        await until(lambda: set(service.documents) == {"b.md", "c.md"})
        assert not watching.done()


async def test_a_file_written_right_after_the_restarts_read_is_seen(tmp_path: Path, knowledge_cache: Path) -> None:
    """After a restart the corpus is read again once the new watch is armed. Read before it (as it was), a
    file written between the read and the arming was named by no event and never read (a slow machine's
    watcher test hit it); here the file is written the moment that read ends."""
    docs = tmp_path / "docs"
    docs.mkdir()
    async with watched(docs, knowledge_cache) as (service, watching):
        reload = service._reload_logged

        async def reload_then_write(changed=None) -> None:
            await reload(changed)
            if changed is None and not (docs / "late.md").exists():  # the restart's read of the whole corpus
                (docs / "late.md").write_text("# Late\n\nWritten as soon as the corpus was read.\n")

        service._reload_logged = reload_then_write  # type: ignore[method-assign]
        shutil.rmtree(docs)
        docs.mkdir()
        (docs / "b.md").write_text("# B\n\nWritten into the folder made again.\n")
        await until(lambda: set(service.documents) == {"b.md", "late.md"})
        assert not watching.done()


async def test_the_watcher_outlives_a_file_name_that_is_not_utf8(tmp_path: Path, knowledge_cache: Path) -> None:
    """watchfiles raises on an event for a path it cannot decode; out of the watch task, that stopped the
    server (a background task's failure is fatal). Now watching resumes and later edits are seen."""
    async with watched(tmp_path, knowledge_cache) as (service, watching):
        Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9.md")).write_text("# Latin-1 name\n\ntext\n")
        await asyncio.sleep(1.5)
        (tmp_path / "b.md").write_text("# B\n\nWritten after the bad name.\n")
        await until(lambda: "b.md" in service.documents or watching.done())
        assert not watching.done() and [s.document_id for s in service.skipped] == ["caf\\xe9.md"]


async def test_health_names_the_files_the_corpus_could_not_read_until_they_are_fixed(
        tmp_path: Path, knowledge_cache: Path) -> None:
    from hexmcp.tools.knowledge.service import KnowledgeService

    (tmp_path / "a.md").write_text("# A\n\nA page.\n")
    (tmp_path / "logo.md").write_bytes(os.urandom(4096))
    service = KnowledgeService(KnowledgeConfig(corpus=CorpusSpec(roots=[tmp_path]), cache_dir=knowledge_cache))
    await service.ensure_documents()
    assert service.describe()["skipped"] == {"count": 1, "files": [
        {"document": "logo.md", "reason": "logo.md: binary data, not text; not read"}]}
    (tmp_path / "logo.md").write_text("# Logo\n\nNow a page.\n")
    await service.reload()
    assert "skipped" not in service.describe() and set(service.documents) == {"a.md", "logo.md"}
