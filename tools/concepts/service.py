"""The concept base as a running service: built from the knowledge service's newest index, rebuilt
when the index changes, never blocking a call that an older concept base can answer.

The first call waits for the first build; after an index change (a re-indexed corpus, or the final
index replacing a partial one) calls keep the previous concept base while the new one builds in a
worker thread (stale-while-revalidate), and the build reuses per-document evidence (build.py).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import structlog

from hexmcp.tools.embedding.background_thread import BuildThread
from hexmcp.tools.embedding.background_work import BackgroundWork

if TYPE_CHECKING:  # numpy, networkx and YAKE load with the first build, not at start-up
    from hexmcp.tools.ports import KnowledgeBase, KnowledgeIndex

    from .base import ConceptBase
    from .build import EvidenceCache

log = structlog.get_logger(__name__)


class ConceptService:
    def __init__(self, knowledge: KnowledgeBase, glossary_path: str | Path | None = None) -> None:
        """Reads the glossary now, so a bad file stops start-up (GlossaryError) before anything is served."""
        self.knowledge = knowledge
        if glossary_path:  # glossary.py brings PyYAML: not on the cold start without --glossary
            from .glossary import load_glossary

            self.glossary: Any = load_glossary(glossary_path)
        else:
            self.glossary = None  # an empty Glossary, made with the first build
        self._base: ConceptBase | None = None
        self._cache: EvidenceCache | None = None
        self._lock = asyncio.Lock()
        self._rebuild: asyncio.Task[ConceptBase] | None = None
        self.background: BackgroundWork | None = None  # the build running now, for /health
        # Every rebuild (one per new index version) on one long-lived thread, as the knowledge service's builds:
        # a thread made per build leaves what it freed in its own malloc arena (ADR 0615).
        self.builds = BuildThread("hexmcp-concepts")
        # Set when the tools' handlers are made on first use (first_use.py): start() loads them first, once
        # the server is answering, so a first call rarely has to.
        self.load_handlers: Callable[[], Any] | None = None

    @property
    def ready(self) -> bool:
        return self._base is not None

    @property
    def loaded(self) -> ConceptBase | None:
        """The newest concept base built so far, without waiting (argument completion must not block)."""
        return self._base

    async def start(self) -> None:
        """Build once the knowledge index is complete (the start-up hook)."""
        if self.load_handlers is not None:
            self.load_handlers()
        from hexmcp.tools.ports import KnowledgeIndexError

        await self.knowledge.start()
        try:
            await self.base()
        except KnowledgeIndexError as error:  # a vector store not up (yet) is not fatal: the next call retries
            if not error.unavailable:
                raise
            log.warning("the vector store is unavailable; concepts build on the next call", error=error.message)

    async def base(self) -> ConceptBase:
        index = await self.knowledge.index()
        current = self._base
        if current is not None and current.index_version == index.version:
            return current
        if current is None:
            return await self._build(index)
        if self._rebuild is None or self._rebuild.done():
            self._rebuild = asyncio.ensure_future(self._build(index))
            self._rebuild.add_done_callback(_log_failure)
        return current

    async def _build(self, index: KnowledgeIndex) -> ConceptBase:
        async with self._lock:
            if self._base is not None and self._base.index_version == index.version:
                return self._base
            from .build import EvidenceCache, build_concept_base
            from .errors import ConceptBuildStopped
            from .glossary import Glossary

            self.glossary = self.glossary or Glossary()
            self._cache = self._cache or EvidenceCache()
            embedder = self.knowledge.embedder
            # The index's page catalogue folds a page's version copies; an index without one (a test's
            # stand-in) builds as before, every document its own page.
            # Background work, on a thread below the server's priority whose passages yield to foreground
            # ones (hexmcp.tools.embedding.background_thread); /health shows it while it runs.
            work = BackgroundWork("concept extraction", None, unit="documents", step="reading documents")
            self.background = work

            stopping = threading.Event()

            def keep_going() -> None:  # from the build thread: between documents, and often while relating
                if stopping.is_set():
                    log.info("concept extraction stopped with the server", documents=work.done, total=work.total,
                             step=work.step)
                    raise ConceptBuildStopped("the server is stopping")

            def read(extracted: int, total: int) -> None:  # from the build thread, after each document
                work.total = total
                if work.done + 1 >= total:
                    work.step = "relating concepts"  # drafting, mentions, the graph: no count to show
                work.advance(1, extracted)

            try:
                base = await self.builds.run(functools.partial(
                    build_concept_base, index.documents, index.passages, index.version, self.glossary,
                    embed_many=embedder.embed_many, dimension=embedder.dimension, embed_query=index.embed_query,
                    nearest_passages=index.nearest_passages, cache=self._cache, pages=getattr(index, "pages", None),
                    progress=read, checkpoint=keep_going))
            except asyncio.CancelledError:
                # The server is stopping (its start-up hook, or a rebuild, is cancelled): tell the thread to stop
                # at its next checkpoint (after the document it is reading, or a slice of the relating steps),
                # or the process would wait for the whole build to exit.
                stopping.set()
                raise
            finally:
                self.background = None
            self._base = base
            log.info("concepts ready", index_version=index.version, **_stats(base))
            return base

    def describe(self) -> dict[str, Any]:
        base = self._base
        return {"ready": base is not None, **(_stats(base) if base is not None else {}),
                **({"background": work.report()} if (work := self.background) is not None else {})}


def _log_failure(task: asyncio.Task[Any]) -> None:
    """A background rebuild that fails leaves the previous concept base serving; the next call retries."""
    if not task.cancelled() and task.exception() is not None:
        log.error("rebuilding the concepts failed; the previous ones stay", exc_info=task.exception())


def _stats(base: ConceptBase) -> dict[str, Any]:
    stats = base.stats
    return {} if stats is None else {"concepts": stats.concepts, "edges": stats.edges,
                                     "extraction_seconds": stats.extraction_seconds,
                                     "build_seconds": stats.total_seconds}
