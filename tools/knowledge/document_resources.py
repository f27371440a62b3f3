"""Every document of the corpus as a resource (`hexmcp://docs/<path>`), kept in step with the corpus,
and a template that reads any document by its path.

The per-document resources follow the corpus as it changes (added, removed, edited files), each with its
own title, size and MIME type, so they are added to and removed from the server's resource registry
directly; the template is declared once, through the registrar.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from hexmcp.core import ErrorCode, ProtocolError, models
from hexmcp.core.registrar import Registrar
from hexmcp.core.resources import Completer

from .readers import served_media_type
from .service import RESOURCE_TEMPLATE, CorpusChange, KnowledgeService, resource_uri


def register_document_resources(registrar: Registrar, service: KnowledgeService) -> None:
    server = registrar.mcp
    for document in sorted(service.documents.values(), key=lambda d: d.document_id):
        server.resources.add(_resource(document), _reader(service, document.document_id))

    def on_change(change: CorpusChange) -> None:
        # One list_changed for the whole change (the first load adds every document); an edit is an update.
        with server.resources.batch():
            for document_id in change.removed:
                server.resources.remove(resource_uri(document_id))
            for document_id in change.added:
                server.resources.add(_resource(service.documents[document_id]), _reader(service, document_id))
            for document_id in change.modified:
                server.resources.add(_resource(service.documents[document_id]), _reader(service, document_id))
                server.notify_resource_updated(resource_uri(document_id))

    service.listeners.append(on_change)

    @registrar.resource(RESOURCE_TEMPLATE, name="document", title="A document of the knowledge base",
                        description="Any document by its corpus-relative path (see listDocuments).",
                        completer=_document_paths(service))
    async def read_document(path: str) -> str:
        await service.ensure_documents()
        document = service.documents.get(unquote(path))
        if document is None:
            raise ProtocolError(ErrorCode.RESOURCE_NOT_FOUND, f"unknown document id {unquote(path)!r}",
                                {"uri": resource_uri(unquote(path))})
        return document.text


def _document_paths(service: KnowledgeService) -> Completer:
    """Completion of the template's `path`: the document ids starting with what was typed, then those with a
    folder or file name starting with it (a file name typed without its folders), each in path order, case
    ignored. It never waits for (or starts) the first read: before it, there is nothing to offer."""
    async def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:
        if argument != "path":
            return []
        typed = unquote(value).lower()
        in_segment = "/" + typed
        starting, named = [], []
        for document_id in sorted(service.documents):
            lowered = document_id.lower()
            if lowered.startswith(typed):
                starting.append(document_id)
            elif in_segment in lowered:
                named.append(document_id)
        return starting + named
    return complete


def _resource(document: Any) -> models.Resource:
    return models.Resource(uri=resource_uri(document.document_id), name=document.document_id, title=document.title,
                           mime_type=served_media_type(document.media_type),
                           size=len(document.text.encode("utf-8")))


def _reader(service: KnowledgeService, document_id: str) -> Any:
    async def read() -> str:
        await service.ensure_documents()
        return service.documents[document_id].text
    return read
