"""The knowledge pack: `search` and `fetch` as ChatGPT connectors call them, `listDocuments`,
`searchPassages`, `indexDocuments`, every document as a resource, and the read-only /docs/ route over HTTP.
It offers its documents and index to other packs (`KnowledgeBase`: concepts, the gateway's prompts)."""

from __future__ import annotations

import argparse
from typing import Any, Iterable, Mapping

from hexmcp.core.pack import BackgroundTask, DocumentLookup, MetricFamily, Pack, PackProblem, Sample, Setup
from hexmcp.tools.ports import KnowledgeBase

DOCS_PREFIX = "/docs/"


class KnowledgePack(Pack):
    name = "knowledge"
    extra = "knowledge"
    extra_modules = ("markdown_it", "mdit_py_plugins", "docutils", "pypdf", "selectolax", "bm25s", "Stemmer", "faiss",
                     "watchfiles", "pathspec")
    offers = (KnowledgeBase,)
    order = 20

    def __init__(self) -> None:
        self.service: Any = None

    def add_flags(self, flags: argparse._ArgumentGroup) -> None:
        from .flags import add_knowledge_flags

        add_knowledge_flags(flags)

    def enabled(self, settings: argparse.Namespace) -> bool:
        return not getattr(settings, "no_knowledge", False)

    def requested(self, settings: argparse.Namespace) -> bool:
        return bool(settings.docs) or settings.vector_store != "memory"

    def register(self, setup: Setup) -> None:
        """A missing --docs path, nothing readable, or a --vector-store spec that names no store stops
        start-up here (exit 2)."""
        from .flags import knowledge_config
        from .mcp_tools import register_knowledge_tools
        from .vectors import check_vector_store_spec

        check_vector_store_spec(setup.settings.vector_store)
        self.service = register_knowledge_tools(setup.registrar, knowledge_config(setup.settings))
        self.service.http_base = setup.http_base

    def ports(self) -> Mapping[type, Any]:
        return {KnowledgeBase: self.service}

    async def start(self) -> None:
        await self.service.start()

    def background(self) -> list[BackgroundTask]:
        return [self.service.watch]

    def warm(self) -> bool:
        return bool(self.service.describe().get("complete"))

    def health(self) -> Mapping[str, Any]:
        return self.service.describe()

    def documents(self) -> Mapping[str, DocumentLookup]:
        service = self.service

        async def lookup(document_id: str) -> tuple[str, str] | None:
            from .readers import served_media_type

            await service.ensure_documents()
            document = service.documents.get(document_id)
            if document is None:
                return None
            # PDFs and HTML pages are served as the text extracted from them.
            return document.text, served_media_type(document.media_type)

        return {DOCS_PREFIX: lookup}

    def metrics(self) -> Iterable[MetricFamily]:
        seconds = dict(self.service.search_seconds)
        yield MetricFamily(
            name="hexmcp_knowledge_search_seconds", kind="summary", label_names=("tool",),
            help="Time the knowledge index took to answer a search (the index's work alone), by tool",
            samples=tuple(Sample(labels=(tool,), count=count, value=seconds.get(tool, 0.0))
                          for tool, count in sorted(dict(self.service.searches).items())))
        counts = dict(self.service.vector_cache_lookups)
        yield MetricFamily(
            name="hexmcp_knowledge_vector_cache_lookups", kind="counter", label_names=("result",),
            help="Documents looked up in the passage-vector cache by the index builds: hit (vectors reused) or "
                 "miss (embedded)",
            samples=tuple(Sample(labels=(result,), value=counts.get(result, 0)) for result in ("hit", "miss")))

    def versions(self) -> Mapping[str, Any]:
        return {"index": self.service.describe().get("index_version")}

    def explain(self, error: Exception) -> PackProblem | None:
        from .errors import CorpusError
        from .vectors import VectorStoreError

        if isinstance(error, (CorpusError, VectorStoreError)):
            return PackProblem(str(error))
        return None
