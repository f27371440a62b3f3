"""The knowledge tools: `search` and `fetch` in exactly the shapes ChatGPT connectors and deep research
call them, `listDocuments`, `searchPassages`, and (registered beside them) `indexDocuments` and every
document as a resource.

These four are read-only. `search` answers one result per document (its best passage's id, so
`fetch` can cite the passage); `fetch` takes a passage id or a document id. Unknown ids and bad
queries are invalid_params naming the id or the limit, never a tool crash.
"""

# No `from __future__ import annotations`: the tool decorator reads the handlers' return types
# as types (their output schemas), not as strings.

import asyncio
import time
from typing import Annotated, Any

from hexmcp.core import ErrorCode, ProtocolError, ToolError, models
from hexmcp.core.pagination import page
from hexmcp.core.registrar import Registrar

from .answers import DocumentPage, FetchedText, PassageHits, SearchResults
from .document_resources import register_document_resources
from .errors import QueryError, UnknownIdError
from .fusion import DENSE_WEIGHT
from .index_task import register_index_tool
from .queries import MAX_QUERY_CHARS
from .vectors import VectorStoreError
from .service import KnowledgeConfig, KnowledgeService, resource_uri
from .versions import path_matches

SEARCH_LIMIT = 10
MAX_PASSAGE_LIMIT = 50
READ_ONLY = models.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

Query = Annotated[str, f"What to look for, in your own words (at most {MAX_QUERY_CHARS} characters).",
                  {"maxLength": MAX_QUERY_CHARS}]  # declared for clients; `clean_query` checks it too
PassageLimit = Annotated[int, "The most passages to answer, best first.", {"minimum": 1, "maximum": MAX_PASSAGE_LIMIT}]
Version = Annotated[str, "Only this version's copies of versioned pages (e.g. 2.1, v3, 2025-06-18, draft); pages "
                         "kept in one version only are always searched.", {"minLength": 1, "maxLength": 100}]
PathFilter = Annotated[str, "Only documents under this folder (or matching this glob, where * crosses /).",
                       {"minLength": 1, "maxLength": 500}]
# An argument a client may leave out is typed `str = None`, not `str | None`: its schema stays
# {"type": "string"}, so an explicit null stays invalid.


def register_knowledge_tools(registrar: Registrar, config: KnowledgeConfig) -> KnowledgeService:
    service = KnowledgeService(config)
    _register_search(registrar, service)
    _register_fetch(registrar, service)
    _register_list_documents(registrar, service)
    _register_search_passages(registrar, service)
    register_document_resources(registrar, service)
    register_index_tool(registrar, service)
    return service


def _register_search(registrar: Registrar, service: KnowledgeService) -> None:
    @registrar.tool("search", title="Search the documents", annotations=READ_ONLY, schemas_checked_in_tests=True,
                    description="Search the knowledge base; returns up to 10 distinct pages, each as the id of its "
                                "best-matching passage (give it to fetch), a title and a URL to cite. A page kept in "
                                "several versions answers once, from the newest (its other versions in metadata); "
                                "version and path narrow the search.")
    async def search(query: Query, version: Version = None, path: PathFilter = None) -> SearchResults:  # type: ignore[assignment]
        index = await _current_index(service)
        _check_filters(index, "search", version, path)
        started = time.perf_counter()
        try:
            # Embedding the query, BM25 and the vector store's answer (a network call for Qdrant): off the loop.
            hits = await asyncio.to_thread(index.search_documents, query, SEARCH_LIMIT, version=version, path=path)
        except QueryError as error:
            raise _query_error("search", error) from None
        finally:
            service.record_search("search", time.perf_counter() - started)
        return {"results": [{"id": h.best.passage.passage_id, "title": _title(h.best.passage),
                             "url": service.url(h.document.document_id),
                             "metadata": _versions({"path": h.document.document_id}, h.version, h.copies)}
                            for h in hits]}


def _register_fetch(registrar: Registrar, service: KnowledgeService) -> None:
    @registrar.tool("fetch", title="Fetch a passage or document", annotations=READ_ONLY,
                    schemas_checked_in_tests=True,
                    description="The full text of a passage (id from search or searchPassages) or of a whole "
                                "document (id from listDocuments), with its URL and where it sits in its document.")
    async def fetch(id: Annotated[str, "A passage id (from search or searchPassages) or a document id "  # noqa: A002
                                       "(from listDocuments)."]) -> FetchedText:
        index = await _current_index(service)
        if id in service.documents:  # documents are served whole even before they are indexed
            document = service.documents[id]
            return {"id": id, "title": document.title, "text": document.text, "url": service.url(id), "metadata": {
                "path": id, "headingPath": [], "offsets": {"start": 0, "end": len(document.text)},
                "mimeType": document.media_type, "indexVersion": index.version}}
        try:
            passage = index.passage(id)
        except UnknownIdError as error:  # a passage id or a document id: say it is neither
            raise ProtocolError(ErrorCode.INVALID_PARAMS, f"Invalid arguments for tool 'fetch': argument id: {id!r} "
                                "is neither a passage id (from search or searchPassages) nor a document id (from "
                                "listDocuments)", {"path": "$.arguments.id", "id": error.identifier}) from None
        return {"id": id, "title": _title(passage), "text": passage.text,
                "url": service.url(passage.document_id), "metadata": {
                    "path": passage.document_id, "headingPath": list(passage.headings),
                    "offsets": {"start": passage.start, "end": passage.end}, "documentId": passage.document_id,
                    "indexVersion": index.version}}


def _register_list_documents(registrar: Registrar, service: KnowledgeService) -> None:
    @registrar.tool("listDocuments", title="List the documents", annotations=READ_ONLY, schemas_checked_in_tests=True,
                    description="The documents of the knowledge base, a page at a time (pass nextCursor back).")
    async def list_documents(cursor: Annotated[str, "The nextCursor of the previous page; omit it for the first "
                                                    "page."] = None) -> DocumentPage:  # type: ignore[assignment]
        await service.ensure_documents()
        documents = sorted(service.documents.values(), key=lambda d: d.document_id)
        try:
            items, next_cursor = page(documents, cursor, registrar.mcp.options.page_size)
        except ProtocolError:  # the list methods' "Invalid cursor", which names no tool argument
            raise ProtocolError(ErrorCode.INVALID_PARAMS, "Invalid arguments for tool 'listDocuments': argument "
                                "cursor: not a cursor this server gave out; pass back the nextCursor of the previous "
                                "page, or omit cursor for the first page", {"path": "$.arguments.cursor"}) from None
        result: DocumentPage = {"documents": [
            {"id": d.document_id, "title": d.title, "uri": resource_uri(d.document_id),
             "url": service.url(d.document_id), "mimeType": d.media_type} for d in items]}
        if next_cursor:
            result["nextCursor"] = next_cursor
        return result


def _register_search_passages(registrar: Registrar, service: KnowledgeService) -> None:
    @registrar.tool("searchPassages", title="Search passages", annotations=READ_ONLY, schemas_checked_in_tests=True,
                    description=f"Hybrid (BM25 + embedding) passage search. score is 0..1: {DENSE_WEIGHT:g} × "
                                f"cosine similarity + {1 - DENSE_WEIGHT:g} × term overlap relative to the query's best "
                                "lexical match; comparable across queries. documentId confines the search to one "
                                "document; version and path narrow it. A passage that several versions of a page "
                                "hold answers once, from the newest (the others in otherVersions).")
    async def search_passages(query: Query, limit: PassageLimit = SEARCH_LIMIT,
                              documentId: Annotated[str, "Only this document's passages (a document id from "  # noqa: N803
                                                         "listDocuments, or a result's documentId)."] = None,  # type: ignore[assignment]
                              version: Version = None, path: PathFilter = None) -> PassageHits:  # type: ignore[assignment]
        index = await _current_index(service)
        _check_filters(index, "searchPassages", version, path)
        started = time.perf_counter()
        try:
            hits = await asyncio.to_thread(index.search_passages, query, int(limit), document_id=documentId,
                                           version=version, path=path)
        except QueryError as error:
            raise _query_error("searchPassages", error) from None
        except UnknownIdError as error:
            raise _unknown(error, "$.arguments.documentId") from None
        finally:
            service.record_search("searchPassages", time.perf_counter() - started)
        return {"items": [_versions({
            "kind": "passage", "documentId": h.passage.document_id, "passageId": h.passage.passage_id,
            "title": _title(h.passage), "text": h.passage.text, "score": round(h.score, 6),
            "headingPath": list(h.passage.headings), "offsets": {"start": h.passage.start, "end": h.passage.end}},
            index.pages.label(h.passage.document_id), h.copies) for h in hits]}


async def _current_index(service: KnowledgeService) -> Any:
    try:
        return await service.index()
    except VectorStoreError as error:  # a Qdrant server not up (yet): the next call retries it
        raise ToolError(f"the knowledge index is unavailable: {error.message}; try again later") from None


def _query_error(tool: str, error: QueryError) -> ProtocolError:
    return ProtocolError(ErrorCode.INVALID_PARAMS, f"Invalid arguments for tool {tool!r}: {error}",
                         {"path": "$.arguments.query", "limit": MAX_QUERY_CHARS})


def _check_filters(index: Any, tool: str, version: str | None, path: str | None) -> None:
    """A version no versioned page has, or a path no document is under, is a mistake to name (as
    indexDocuments names its path), not a search that silently finds nothing."""
    if version is not None and not index.pages.knows_version(version):
        labels = index.pages.version_labels
        raise ProtocolError(ErrorCode.INVALID_PARAMS,
                            f"Invalid arguments for tool {tool!r}: argument version: no page of the knowledge base is "
                            f"kept in version {version!r}; its versions are {', '.join(labels)} (or omit version)",
                            {"path": "$.arguments.version", "version": version, "versions": list(labels)})
    if path is not None and not any(path_matches(document_id, path) for document_id in index.documents):
        raise ProtocolError(ErrorCode.INVALID_PARAMS,
                            f"Invalid arguments for tool {tool!r}: argument path: no document of the knowledge base "
                            f"is under or matches {path!r}; listDocuments names them (or omit path)",
                            {"path": "$.arguments.path", "value": path})


def _unknown(error: UnknownIdError, path: str) -> ProtocolError:
    return ProtocolError(ErrorCode.INVALID_PARAMS, str(error), {"path": path, "id": error.identifier})


def _versions(item: Any, version: str | None, copies: tuple[str, ...]) -> Any:
    if version is not None:
        item["version"] = version
    if copies:
        item["otherVersions"] = list(copies)
    return item


def _title(passage: Any) -> str:
    tail = [h for h in passage.headings if h != passage.title]
    return " — ".join([passage.title, " > ".join(tail)]) if tail else passage.title
