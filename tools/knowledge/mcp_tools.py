"""The knowledge tools and resources: `search` and `fetch` in exactly the shapes ChatGPT connectors
and deep research call them, `listDocuments`, `searchPassages`, and every document as a resource.

All four tools are read-only. `search` answers one result per document (its best passage's id, so
`fetch` can cite the passage); `fetch` takes a passage id or a document id. Unknown ids and bad
queries are invalid_params naming the id or the limit, never a tool crash.
"""

from __future__ import annotations

import time
from typing import Any

from hexmcp.core import ErrorCode, McpServer, ProtocolError, ToolContext, ToolError, models
from hexmcp.core.pagination import page

from .errors import QueryError, UnknownIdError
from .fusion import DENSE_WEIGHT
from .index_task import register_index_tool
from .queries import MAX_QUERY_CHARS
from .vectors import VectorStoreError
from .service import RESOURCE_TEMPLATE, CorpusChange, KnowledgeConfig, KnowledgeService, resource_uri

SEARCH_LIMIT = 10
MAX_PASSAGE_LIMIT = 50
_STRING = {"type": "string"}
_OFFSETS = {"type": "object", "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
            "required": ["start", "end"]}

SEARCH_OUTPUT = {"type": "object", "required": ["results"], "properties": {"results": {"type": "array", "items": {
    "type": "object", "required": ["id", "title", "url"],
    "properties": {"id": _STRING, "title": _STRING, "url": _STRING}}}}}
FETCH_OUTPUT = {"type": "object", "required": ["id", "title", "text", "url", "metadata"], "properties": {
    "id": _STRING, "title": _STRING, "text": _STRING, "url": _STRING, "metadata": {"type": "object"}}}
LIST_OUTPUT = {"type": "object", "required": ["documents"], "properties": {
    "documents": {"type": "array", "items": {"type": "object", "required": ["id", "title", "uri", "url"], "properties": {
        "id": _STRING, "title": _STRING, "uri": _STRING, "url": _STRING, "mimeType": _STRING}}},
    "nextCursor": _STRING}}
PASSAGES_OUTPUT = {"type": "object", "required": ["items"], "properties": {"items": {"type": "array", "items": {
    "type": "object", "required": ["kind", "documentId", "passageId", "title", "text", "score", "offsets"],
    "properties": {"kind": {"const": "passage"}, "documentId": _STRING, "passageId": _STRING, "title": _STRING,
                   "text": _STRING, "score": {"type": "number", "minimum": 0, "maximum": 1},
                   "headingPath": {"type": "array", "items": _STRING}, "offsets": _OFFSETS}}}}}

_QUERY = {"type": "string", "description": f"What to look for, in your own words (at most {MAX_QUERY_CHARS} characters)."}


def _query_error(tool: str, error: QueryError) -> ProtocolError:
    return ProtocolError(ErrorCode.INVALID_PARAMS, f"Invalid arguments for tool {tool!r}: {error}",
                         {"path": "$.arguments.query", "limit": MAX_QUERY_CHARS})


def _unknown(error: UnknownIdError, path: str) -> ProtocolError:
    return ProtocolError(ErrorCode.INVALID_PARAMS, str(error), {"path": path, "id": error.identifier})


def register_knowledge_tools(server: McpServer, config: KnowledgeConfig) -> KnowledgeService:
    service = KnowledgeService(config)

    async def current_index() -> Any:
        try:
            return await service.index()
        except VectorStoreError as error:  # a Qdrant server not up (yet): the next call retries it
            raise ToolError(f"the knowledge index is unavailable: {error.message}; try again later") from None

    async def search(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        index = await current_index()
        started = time.perf_counter()
        try:
            hits = index.search_documents(arguments["query"], SEARCH_LIMIT)
        except QueryError as error:
            raise _query_error("search", error) from None
        finally:
            service.record_search("search", time.perf_counter() - started)
        return {"results": [{"id": h.best.passage.passage_id, "title": _title(h.best.passage),
                             "url": service.url(h.document.document_id)} for h in hits]}

    async def fetch(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        index = await current_index()
        identifier = arguments["id"]
        if identifier in service.documents:  # documents are served whole even before they are indexed
            document = service.documents[identifier]
            return {"id": identifier, "title": document.title, "text": document.text,
                    "url": service.url(identifier), "metadata": {
                        "path": identifier, "headingPath": [], "offsets": {"start": 0, "end": len(document.text)},
                        "mimeType": document.media_type, "indexVersion": index.version}}
        try:
            passage = index.passage(identifier)
        except UnknownIdError as error:
            raise _unknown(error, "$.arguments.id") from None
        return {"id": identifier, "title": _title(passage), "text": passage.text,
                "url": service.url(passage.document_id), "metadata": {
                    "path": passage.document_id, "headingPath": list(passage.headings),
                    "offsets": {"start": passage.start, "end": passage.end}, "documentId": passage.document_id,
                    "indexVersion": index.version}}

    async def list_documents(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        await service.ensure_documents()
        documents = sorted(service.documents.values(), key=lambda d: d.document_id)
        items, cursor = page(documents, arguments.get("cursor"), server.options.page_size)
        result: dict[str, Any] = {"documents": [
            {"id": d.document_id, "title": d.title, "uri": resource_uri(d.document_id),
             "url": service.url(d.document_id), "mimeType": d.media_type} for d in items]}
        if cursor:
            result["nextCursor"] = cursor
        return result

    async def search_passages(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        index = await current_index()
        started = time.perf_counter()
        try:
            hits = index.search_passages(arguments["query"], int(arguments.get("limit", SEARCH_LIMIT)),
                                         document_id=arguments.get("documentId"))
        except QueryError as error:
            raise _query_error("searchPassages", error) from None
        except UnknownIdError as error:
            raise _unknown(error, "$.arguments.documentId") from None
        finally:
            service.record_search("searchPassages", time.perf_counter() - started)
        return {"items": [{"kind": "passage", "documentId": h.passage.document_id, "passageId": h.passage.passage_id,
                           "title": _title(h.passage), "text": h.passage.text, "score": round(h.score, 6),
                           "headingPath": list(h.passage.headings),
                           "offsets": {"start": h.passage.start, "end": h.passage.end}} for h in hits]}

    read_only = models.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    server.tools.add("search", search, title="Search the documents",
                     description="Search the knowledge base; returns up to 10 documents, each as the id of its "
                                 "best-matching passage (give it to fetch), a title and a URL to cite.",
                     input_schema={"type": "object", "properties": {"query": _QUERY}, "required": ["query"]},
                     output_schema=SEARCH_OUTPUT, annotations=read_only, schemas_checked_in_tests=True)
    server.tools.add("fetch", fetch, title="Fetch a passage or document",
                     description="The full text of a passage (id from search or searchPassages) or of a whole "
                                 "document (id from listDocuments), with its URL and where it sits in its document.",
                     input_schema={"type": "object", "properties": {"id": _STRING}, "required": ["id"]},
                     output_schema=FETCH_OUTPUT, annotations=read_only, schemas_checked_in_tests=True)
    server.tools.add("listDocuments", list_documents, title="List the documents",
                     description="The documents of the knowledge base, a page at a time (pass nextCursor back).",
                     input_schema={"type": "object", "properties": {"cursor": _STRING}},
                     output_schema=LIST_OUTPUT, annotations=read_only, schemas_checked_in_tests=True)
    server.tools.add("searchPassages", search_passages, title="Search passages",
                     description=f"Hybrid (BM25 + embedding) passage search. score is 0..1: {DENSE_WEIGHT:g} × cosine "
                                 f"similarity + {1 - DENSE_WEIGHT:g} × term overlap relative to the query's best lexical match; "
                                 "comparable across queries. documentId confines the search to one document.",
                     input_schema={"type": "object", "required": ["query"], "properties": {
                         "query": _QUERY, "limit": {"type": "integer", "minimum": 1, "maximum": MAX_PASSAGE_LIMIT,
                                                    "default": SEARCH_LIMIT},
                         "documentId": _STRING}},
                     output_schema=PASSAGES_OUTPUT, annotations=read_only, schemas_checked_in_tests=True)
    register_document_resources(server, service)
    register_index_tool(server, service)
    return service


def _title(passage: Any) -> str:
    tail = [h for h in passage.headings if h != passage.title]
    return " — ".join([passage.title, " > ".join(tail)]) if tail else passage.title


def register_document_resources(server: McpServer, service: KnowledgeService) -> None:
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
    server.resources.add_template(models.ResourceTemplate(
        uri_template=RESOURCE_TEMPLATE, name="document", title="A document of the knowledge base",
        description="Any document by its corpus-relative path (see listDocuments)."), _template_reader(service))


def _resource(document: Any) -> models.Resource:
    return models.Resource(uri=resource_uri(document.document_id), name=document.document_id, title=document.title,
                           mime_type=document.media_type if document.media_type != "application/pdf" else "text/plain",
                           size=len(document.text.encode("utf-8")))


def _reader(service: KnowledgeService, document_id: str) -> Any:
    async def read() -> str:
        await service.ensure_documents()
        return service.documents[document_id].text
    return read


def _template_reader(service: KnowledgeService) -> Any:
    async def read(path: str) -> str:
        from urllib.parse import unquote

        await service.ensure_documents()
        document = service.documents.get(unquote(path))
        if document is None:
            raise ProtocolError(ErrorCode.RESOURCE_NOT_FOUND, f"unknown document id {unquote(path)!r}",
                                {"uri": resource_uri(unquote(path))})
        return document.text
    return read
