"""`indexDocuments`: (re)index the corpus, or the part of it under a path, as a long-running tool.

Indexing a corpus takes minutes, so the tool is registered `long_running=True`: a client that declares
the tasks extension gets a task at once and polls it (progress shows as the task's statusMessage);
`tasks/cancel` stops the embedding after the batch in flight. Any other client waits for the result, as
for any tool. The path is a prefix of document ids (paths under the --docs roots), never a file system
path: the tool cannot be pointed outside the corpus the operator chose.
"""

# No `from __future__ import annotations`: the tool decorator reads the handlers' return types
# as types (their output schemas), not as strings.

import asyncio
import functools
import threading
import time
from typing import Annotated, Any

import structlog

from hexmcp.core import ToolContext, ToolError
from hexmcp.core.registrar import Registrar
from hexmcp.tools.cache_dir import default_cache_dir
from hexmcp.tools.embedding.background_work import BackgroundWork

from .answers import IndexSummary
from .errors import IndexingCancelled

log = structlog.get_logger(__name__)

CorpusPath = Annotated[str, "Only documents whose path under the corpus starts with this (a folder like 'guides/' "
                            "or one file); default: the whole corpus."]
Fresh = Annotated[bool, "Drop the cached vectors of these documents and embed every passage again."]


def register_index_tool(registrar: Registrar, service: Any) -> None:
    @registrar.tool("indexDocuments", title="Index documents", long_running=True, schemas_checked_in_tests=True,
                    description="Re-read the corpus and (re)index the documents under `path` (default: all), "
                                "reporting progress; with fresh=true every passage is embedded again. Runs as a "
                                "task for clients that support tasks.")
    async def index_documents(path: CorpusPath = None, fresh: Fresh = False,  # type: ignore[assignment]
                              *, ctx: ToolContext) -> IndexSummary:
        await service.reload()  # files added or edited since the last look are what a re-index is for
        prefix = path or ""
        documents = [d for d in service.documents.values() if d.document_id.startswith(prefix)]
        if not documents:
            raise ToolError(f"no document of the corpus is under {prefix!r}; listDocuments names them")
        await service.index()  # the first build loads the embedder the re-index shares
        summary = await _embed(documents, service, ctx, fresh=fresh)
        # The version of the index the server answers from (reload swapped it in), the indexVersion of the
        # citations a client gets from now on; not the version of the part just re-embedded, which no
        # answer ever carries.
        summary["version"] = (await service.index()).version
        return summary


async def _embed(documents: list[Any], service: Any, ctx: ToolContext, *, fresh: bool) -> IndexSummary:
    from .builder import build_index, cache_path, document_key, new_store
    from .chunking import DEFAULT_MAX_CHARS, chunk_document

    embedder = service.embedder
    chunked = {d.document_id: chunk_document(d, DEFAULT_MAX_CHARS) for d in documents}
    total = sum(len(passages) for passages in chunked.values())
    cache_dir = service.config.cache_dir or default_cache_dir()
    cached = {document_id: cache_path(cache_dir / "knowledge", document_key(embedder, passages))
              for document_id, passages in chunked.items()}
    if fresh:  # drop these documents' cached vectors: they are embedded again and the new ones cached
        for path in cached.values():
            path.unlink(missing_ok=True)
    to_embed = sum(len(chunked[document_id]) for document_id, path in cached.items() if not path.exists())
    loop = asyncio.get_running_loop()
    stop = threading.Event()
    done = 0
    # /health shows this re-index too, unless the service's own build holds the slot (that one says more).
    work, embedded_before = BackgroundWork("re-indexing", total), embedder.embedded
    if service.background is None:
        service.background = work
    reporter = _ProgressReporter(ctx, total)

    def progress(passages: int) -> None:  # from the build thread
        nonlocal done
        done += passages
        work.advance(passages, embedder.embedded - embedded_before)
        if not stop.is_set():  # a cancelled call reports nothing more
            try:
                loop.call_soon_threadsafe(reporter.update, done)
            except RuntimeError:  # the loop is closed: the server stopped under this call
                stop.set()

    started = time.perf_counter()
    # On the service's re-index thread, at background priority like the start-up build: its passages yield to
    # requests (foreground_gate.py), and it reuses the memory the re-index before it freed (ADR 0615) instead
    # of leaving its own in the malloc arena of a thread made for one call.
    build = asyncio.ensure_future(service.reindexes.run(functools.partial(
        build_index, documents, embedder, new_store(embedder.dimension), cache_dir=cache_dir, progress=progress,
        cancelled=stop.is_set)))
    try:
        index = await asyncio.shield(build)
        await reporter.flush()  # every progress notification goes out before the answer, none after it
    except asyncio.CancelledError:
        # The thread cannot be killed: tell it to stop after the batch in flight, and wait for that, so
        # that once the task says cancelled no more embedding happens. Progress stops at once.
        stop.set()
        reporter.stop()
        try:
            await build
        except IndexingCancelled:
            pass
        raise
    finally:
        reporter.stop()
        if service.background is work:
            service.background = None
    return {"documents": len(documents), "passages": len(index.passages), "embedded": to_embed,
            "seconds": round(time.perf_counter() - started, 3)}


class _ProgressReporter:
    """Sends a call's progress from one task, in order: the build thread only records how far it got.

    One notification at a time, each with the latest count (counts that came in while one was being sent
    are folded into the next), so `progress` only ever increases, however slowly the transport writes,
    and `flush` can promise that nothing is left to send once the answer goes out.
    """

    def __init__(self, ctx: ToolContext, total: int) -> None:
        self._ctx, self._total = ctx, total
        self._latest = self._sent = 0
        self._sending: asyncio.Task[None] | None = None
        self._stopped = False

    def update(self, done: int) -> None:  # on the loop
        self._latest = max(self._latest, done)
        if self._sending is None and not self._stopped:
            self._sending = asyncio.ensure_future(self._send())

    async def _send(self) -> None:
        try:
            while self._sent < self._latest and not self._stopped:
                self._sent = self._latest
                await self._ctx.report_progress(self._sent, self._total, "indexing passages")
        except Exception:  # a client gone mid-call: its progress is lost, the call itself goes on
            log.debug("progress not sent", exc_info=True)
            self._stopped = True
        finally:
            self._sending = None

    async def flush(self) -> None:
        """Wait until the latest count has been sent (the build is over: no more will come). The build
        thread queued its last `update` on the loop before the build's result, so it has run by now."""
        if self._sending is not None:
            await asyncio.shield(self._sending)

    def stop(self) -> None:
        """Start no more notifications. One being written is let finish: cut mid-write it could leave a
        transport's frame half sent, and it began before the call was stopped."""
        self._stopped = True
