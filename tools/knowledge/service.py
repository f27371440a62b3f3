"""The knowledge base as a running service: the corpus read and indexed in the background, and the
one place that knows a document's URI and URL.

Making the service only lists the corpus's files (a bad --docs path, or one with nothing to read, stops
start-up with a clear message). Parsing them waits for the server to be up (`ensure_documents`, the
first step of the first build): on the bundled corpus it would be most of a cold start, and a
client's handshake should not wait for documents it may never read. The documents then reach the
listeners as one change (all added): their resources appear with a list_changed notification. Tools
that read documents wait for them; embedding the passages runs in a worker thread after that; search
tools wait for it, nothing else does.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Collection
from urllib.parse import quote

import attrs
import structlog

from hexmcp.tools.cache_dir import default_cache_dir
from hexmcp.tools.embedding.background_thread import BuildThread
from hexmcp.tools.embedding.background_work import BackgroundWork

from .corpus import CorpusSpec, SkippedFile, discover
from .corpus_reader import CorpusReader
from .errors import CorpusError
from .passages import SourceDocument
from .vectors import VectorStoreError, VectorStoreErrorCode

if TYPE_CHECKING:  # numpy and the retrieval stack load with the index, not at start-up
    from .retrieval import KnowledgeIndex

log = structlog.get_logger(__name__)

RESOURCE_PREFIX = "hexmcp://docs/"
RESOURCE_TEMPLATE = RESOURCE_PREFIX + "{path}"
DOCS_ROUTE = "/docs/"


def _optional_path(value: object) -> Path | None:
    return None if value is None else Path(str(value)).expanduser()


@attrs.frozen(kw_only=True)
class KnowledgeConfig:
    corpus: CorpusSpec = attrs.field(factory=CorpusSpec)
    url_base: str | None = None  # --docs-url-base: a document's URL is this + its path
    cache_dir: Path | None = attrs.field(default=None, converter=_optional_path)
    quantization: str = "int8"
    vector_store: str = "memory"
    preferred_version: str | None = None  # --docs-version: whose copy of a versioned page answers for it


def resource_uri(document_id: str) -> str:
    return RESOURCE_PREFIX + quote(document_id, safe="/")


@attrs.frozen(kw_only=True)
class CorpusChange:
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()

    @classmethod
    def between(cls, old: dict[str, SourceDocument], new: dict[str, SourceDocument]) -> CorpusChange:
        return cls(added=tuple(sorted(new.keys() - old.keys())), removed=tuple(sorted(old.keys() - new.keys())),
                   modified=tuple(sorted(i for i in old.keys() & new.keys() if old[i].text != new[i].text)))

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.modified)

    def clear_from(self, store: Any, documents: Collection[str]) -> frozenset[str]:
        """Deletes the store's rows of the documents this change removed or modified; the ids among
        `documents` (the corpus after the change) whose rows the store still holds, which a re-index keeps."""
        for document_id in (*self.removed, *self.modified):
            store.delete_document(document_id)
        return frozenset(set(documents) - {*self.added, *self.modified})


class KnowledgeService:
    def __init__(self, config: KnowledgeConfig) -> None:
        self.config = config
        if not discover(config.corpus) and not config.corpus.bundled:  # listing only: parsing waits (above)
            raise CorpusError("--docs: no readable .md, .mdx, .txt, .rst, .pdf or .html file found")
        self.documents: dict[str, SourceDocument] = {}  # filled by ensure_documents
        self.skipped: list[SkippedFile] = []  # the files the last read of the corpus could not read, for /health
        self._loading: asyncio.Future[None] | None = None
        self.http_base: str | None = None  # set by the HTTP composition: "http://host:port"
        self._index: KnowledgeIndex | None = None
        self._building: asyncio.Future[KnowledgeIndex] | None = None
        self._published = asyncio.Event()
        self._cancel = threading.Event()
        self._lock = asyncio.Lock()
        self.build_seconds: float | None = None
        self._embedder: Any = None  # PassageEmbedder, loaded by the first build and kept
        self._store: Any = None  # the VectorStore, opened by the first build and updated per document after
        self._store_stale = False
        self.listeners: list[Callable[[CorpusChange], None]] = []
        self._reader = CorpusReader(config.corpus)  # the corpus as last read: a change batch re-reads its paths
        self._reading = threading.Lock()  # reads run in worker threads and share the reader
        self._memo: Any = None  # builder.DocumentMemo: each document's passages and keys, kept across re-indexes
        self.reads: collections.Counter[str] = collections.Counter()  # "whole"/"changed" reads of the corpus
        # Searches and the seconds they took (the index's work alone), by tool, for metrics read when scraped.
        self.searches: collections.Counter[str] = collections.Counter()
        self.search_seconds: collections.Counter[str] = collections.Counter()
        self.vector_cache_lookups: collections.Counter[str] = collections.Counter()  # "hit"/"miss" per document
        self.background: BackgroundWork | None = None  # the build running now and its progress, for /health
        # Every build of this service on one long-lived thread (ADR 0615): a re-index keeps what the build
        # before it allocated (term ids, a vocabulary), and a new thread per build left each build's freed
        # memory in another malloc arena (server RSS 360 -> 740-780 MB over eight bursts in half the runs).
        self.builds = BuildThread("hexmcp-index")
        # indexDocuments' re-embeddings on a long-lived thread of their own too: one asked for during the start-up
        # build starts at once instead of queueing behind it, and each reuses the memory the one before it freed.
        self.reindexes = BuildThread("hexmcp-reindex")

    def record_search(self, tool: str, seconds: float) -> None:
        self.searches[tool] += 1
        self.search_seconds[tool] += seconds

    @staticmethod
    def resource_uri(document_id: str) -> str:
        return resource_uri(document_id)

    def url(self, document_id: str) -> str:
        path = quote(document_id, safe="/")
        if self.config.url_base:
            return self.config.url_base.rstrip("/") + "/" + path
        if self.http_base:
            return self.http_base.rstrip("/") + DOCS_ROUTE + path
        return resource_uri(document_id)

    @property
    def embedder(self) -> Any:
        """The PassageEmbedder the index was built with (None before the first build has loaded it)."""
        return self._embedder

    @property
    def ready(self) -> bool:
        return self._index is not None

    async def ensure_documents(self) -> None:
        """Parse the corpus once (in a worker thread) and tell the listeners; later calls wait for that."""
        loading = self._loading
        if loading is None or (loading.done() and (loading.cancelled() or loading.exception() is not None)):
            self._loading = asyncio.ensure_future(self._load_documents())  # a failed read is retried
        await asyncio.shield(self._loading)

    async def _load_documents(self) -> None:
        documents = await self._read_corpus()
        change = CorpusChange.between(self.documents, documents)
        self.documents = documents
        if not documents:
            log.warning("the corpus has no readable document; search answers nothing", roots=[
                str(root) for root in self.config.corpus.roots])
        for listener in self.listeners:
            listener(change)

    async def _read_corpus(self, changed: Collection[str] | None = None) -> dict[str, SourceDocument]:
        """The corpus read again: only the `changed` paths (absolute, as the watcher names them) when the
        reader can take the batch by its paths (corpus_reader.py), else whole."""
        def read() -> tuple[dict[str, SourceDocument], list[SkippedFile]]:
            with self._reading:
                if changed is not None and self._reader.read_changed(changed):
                    self.reads["changed"] += 1
                else:
                    self._reader.read_all()
                    self.reads["whole"] += 1
                return self._reader.documents, self._reader.skipped

        documents, self.skipped = await asyncio.to_thread(read)
        return documents

    async def start(self) -> None:
        """Build the index (idempotent); returns when it is complete. A vector store that cannot be
        reached (a Qdrant server not up yet) is not fatal: /health names it and the next search retries."""
        try:
            await self._ensure_building()
        except VectorStoreError as error:
            if error.code is not VectorStoreErrorCode.UNAVAILABLE:
                raise
            log.warning("the vector store is unavailable; searches retry it", error=error.message)

    def _ensure_building(self) -> asyncio.Future[KnowledgeIndex]:
        if self._building is None or _store_unavailable(self._building) is not None:
            loop = asyncio.get_running_loop()

            def publish(index: KnowledgeIndex) -> None:  # from the build thread
                self._index = index
                try:
                    loop.call_soon_threadsafe(self._published.set)
                except RuntimeError:  # the loop is closed: the server stopped while this build ran, nobody waits
                    pass

            self._building = asyncio.ensure_future(self._run_build(publish))
        return self._building

    async def _run_build(self, publish: Callable[[KnowledgeIndex], None] | None,
                         change: CorpusChange | None = None) -> KnowledgeIndex:
        await self.ensure_documents()
        try:
            # The service's build thread, below the server's priority: the build is background work (the
            # embedder's workers yield to foreground passes, embedder.py), and it must not lower a shared
            # executor thread.
            return await self.builds.run(self._build, publish, change)
        except asyncio.CancelledError:
            # The server is stopping: the thread cannot be killed, so tell it to stop after the
            # document it is embedding, or the interpreter would wait for the whole corpus.
            self._cancel.set()
            raise

    async def index(self) -> KnowledgeIndex:
        """The newest index: a partial one while the first build runs (what is indexed is served),
        the previous one while a changed corpus re-indexes. Waits only for the first snapshot."""
        if self._index is None:
            building = self._ensure_building()
            published = asyncio.ensure_future(self._published.wait())
            await asyncio.wait({published, building}, return_when=asyncio.FIRST_COMPLETED)
            published.cancel()
            if self._index is None:
                building.result()  # the build failed: raise its error
        assert self._index is not None
        return self._index

    async def reload(self, changed: Collection[str] | None = None) -> CorpusChange:
        """Re-read the corpus (only the `changed` paths when given and the batch allows: corpus_reader.py);
        on a change, tell the listeners at once (documents are served from memory, so resources/read already
        has the new text), then re-index (only changed files re-embed and re-chunk) and swap the new index in."""
        await self.ensure_documents()
        documents = await self._read_corpus(changed)
        change = CorpusChange.between(self.documents, documents)
        if not change:
            return change
        self.documents = documents
        for listener in self.listeners:
            listener(change)
        await self._ensure_building()
        async with self._lock:
            self._index = await self._run_build(None, change)
        return change

    async def watch(self, stop: asyncio.Event | None = None) -> None:
        """Reload on every batch of file changes under the --docs roots (watchfiles), until `stop`. A root
        that is deleted (a checkout switched, a build that wipes its output) takes its inotify watch with it,
        and one made again in its place would never be seen: watching stops while any root is missing, the
        last index keeps serving, and once they are all back the corpus is read again and watched anew."""
        if self.config.corpus.bundled:
            return  # the installed documentation does not change while serving
        from watchfiles import DefaultFilter, awatch

        from .watch_filter import CorpusChangeFilter

        roots = self.config.corpus.roots
        stop = stop or asyncio.Event()
        failures = 0  # in a row: a watcher that cannot start (the inotify limit) is retried less and less often
        while not stop.is_set():
            if not await _roots_present(roots, stop):
                return
            try:
                watch_filter = CorpusChangeFilter(roots) if self.config.corpus.gitignore else DefaultFilter()
                async with contextlib.aclosing(awatch(*map(str, roots), stop_event=stop, recursive=True,
                                                      watch_filter=watch_filter)) as batches:
                    # The watch arms first, the roots are read after: a file written between a read and the
                    # arming is named by no event, and was missed until a later change named it (a root made
                    # again, then written to at once; an edit while the server started).
                    changes = await _after_arming(batches, self._reload_logged)
                    while changes is not None:
                        failures = 0
                        gone = _roots_deleted(roots, changes)
                        if gone:
                            log.warning("a --docs root was deleted; serving the last index until it is back",
                                        missing=gone)
                            break
                        await self._reload_logged({path for _, path in changes})
                        changes = await anext(batches, None)
            except Exception as error:  # noqa: BLE001 - an error out of a background task stops the server
                # watchfiles raises on an event for a path it cannot decode (a file name that is not UTF-8)
                # and ends its watch: watch again, after reading what may have changed meanwhile.
                failures += 1
                pause = min(ROOT_POLL_S * 2 ** (failures - 1), MAX_WATCH_RETRY_S)
                cause = error.exceptions[0] if isinstance(error, ExceptionGroup) and error.exceptions else error
                log.warning("the file watcher failed; watching the corpus again", error=str(cause)[:200],
                            retry_in_s=pause)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), pause)

    async def _reload_logged(self, changed: Collection[str] | None = None) -> None:
        try:
            await self.reload(changed)
        except Exception:  # a bad edit must not end watching: log it, keep serving the last index
            log.exception("re-indexing the changed corpus failed; the previous index stays")

    def _build(self, publish: Callable[[KnowledgeIndex], None] | None, change: CorpusChange | None) -> KnowledgeIndex:
        """The first build opens the embedder and the store and keeps them; a re-index after `change`
        deletes the removed and modified documents' rows and writes only the added and modified ones."""
        from .builder import DocumentMemo, build_index, new_store
        from .embedder import PassageEmbedder

        started = time.perf_counter()
        if self._embedder is None:
            self._embedder = PassageEmbedder.load(quantization=self.config.quantization,
                                                  cache_dir=self.config.cache_dir)
        stored: frozenset[str] = frozenset()
        previous = None  # the index serving now, whose unchanged passages' BM25 terms the new one reuses
        if self._memo is None:
            self._memo = DocumentMemo()
        if self._store is None or change is None or self._store_stale:
            self._store = self._open_store(new_store)
        else:
            previous = self._index
            stored = change.clear_from(self._store, self.documents.keys())
        cache = self.config.cache_dir or default_cache_dir()
        self._store_stale = True  # until this build completes: a failed one leaves rows the next cannot trust
        embedder, embedded_before = self._embedder, self._embedder.embedded
        work = BackgroundWork("indexing" if change is None else "re-indexing", None)

        def counted(total: int) -> None:
            work.total = total
            self.background = work

        try:
            index = build_index(list(self.documents.values()), embedder, self._store, cache_dir=cache,
                                publish=publish, cancelled=self._cancel.is_set, stored=stored,
                                cache_lookups=self.vector_cache_lookups,
                                preferred_version=self.config.preferred_version, counted=counted,
                                memo=self._memo, previous=previous,
                                progress=lambda passages: work.advance(passages, embedder.embedded - embedded_before))
        finally:
            if self.background is work:
                self.background = None
        self._store_stale = False
        self.build_seconds = time.perf_counter() - started
        log.info("knowledge index ready", documents=len(self.documents), passages=len(index.passages),
                 seconds=round(self.build_seconds, 2), version=index.version)
        return index

    def _open_store(self, new_store: Callable[[int, str], Any]) -> Any:
        """A new store. The previous one, if any, stays open for the index still serving from it, unless it
        holds what the new one needs: a folder-backed store (Qdrant's local mode, Qdrant Edge) locks its
        folder, so after a failed build the retry would be refused for as long as the server runs. Its rows
        are the failed build's, which nothing may trust, so it is closed and the folder opened again."""
        from .vectors.errors import VectorStoreError, VectorStoreErrorCode

        assert self._embedder is not None
        try:
            return new_store(self._embedder.dimension, self.config.vector_store)
        except VectorStoreError as error:
            if self._store is None or error.code is not VectorStoreErrorCode.UNAVAILABLE:
                raise
            log.warning("closing the store a failed build left open, to open its folder again", error=str(error))
            previous, self._store = self._store, None
            previous.close()
            return new_store(self._embedder.dimension, self.config.vector_store)

    def describe(self) -> dict[str, Any]:
        index = self._index
        building = self._building
        complete = building is not None and building.done() and not building.cancelled() and not building.exception()
        unavailable = _store_unavailable(building) if building is not None else None
        return {"documents": len(self.documents), "passages": len(index.passages) if index else None,
                "index_version": index.version if index else None, "ready": index is not None,
                "complete": complete, **({"vector_store_error": unavailable} if unavailable else {}),
                **({"skipped": _skipped_report(self.skipped)} if self.skipped else {}),
                **({"background": work.report()} if (work := self.background) is not None else {})}


#: How often a missing --docs root is looked for while the last index serves (watch).
ROOT_POLL_S = 1.0
#: The longest wait before a watcher that keeps failing is started again.
MAX_WATCH_RETRY_S = 60.0


def _roots_deleted(roots: tuple[Path, ...], changes: set[tuple[Any, str]]) -> list[str]:
    """The roots a batch of changes shows deleted, or that are missing now. Not the existence check alone: a
    root deleted and made again before the batch is read (watchfiles debounces for over a second) exists again,
    often under the same inode, but its watch died with the old folder and would never report a change."""
    from watchfiles import Change

    deleted = {os.path.abspath(path) for change, path in changes if change == Change.deleted}
    return [str(root) for root in roots if not root.exists() or os.path.abspath(root) in deleted]


async def _after_arming(batches: AsyncIterator[set[tuple[Any, str]]],
                        read: Callable[[], Awaitable[None]]) -> set[tuple[Any, str]] | None:
    """Arm the watch `batches` is (watchfiles makes its watcher in the first step of the first `anext`, before
    it first waits, and keeps every event from then on), run `read`, then return the first batch (None: the
    watch stopped)."""
    first = asyncio.ensure_future(anext(batches, None))
    try:
        await asyncio.sleep(0)  # the first step runs: the watch is armed, or its arming failed
        if not first.done():  # failed (the inotify limit) or stopped: no read, the retry reads once it arms
            await read()
        return await first
    finally:
        if not first.done():  # cancelled or failed meanwhile: let the step end before the generator is closed
            first.cancel()
            await asyncio.wait([first])


async def _roots_present(roots: tuple[Path, ...], stop: asyncio.Event) -> bool:
    """Wait until every root exists (True) or `stop` is set (False)."""
    while not all(root.exists() for root in roots):
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), ROOT_POLL_S)
        if stop.is_set():
            return False
    return True


def _store_unavailable(build: asyncio.Future[Any]) -> str | None:
    """Why a finished build could not open its vector store, or None (running, done, or another failure)."""
    if not build.done() or build.cancelled():
        return None
    error = build.exception()
    if isinstance(error, VectorStoreError) and error.code is VectorStoreErrorCode.UNAVAILABLE:
        return error.message
    return None


#: The skipped files /health names (all are counted, and each was logged when it was skipped).
SKIPPED_NAMED = 20


def _skipped_report(skipped: list[SkippedFile]) -> dict[str, Any]:
    return {"count": len(skipped), "files": [{"document": item.document_id, "reason": item.reason}
                                             for item in skipped[:SKIPPED_NAMED]]}
