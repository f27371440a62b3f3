"""`GET /docs/<path>`: a read-only view of the knowledge base's documents, so `search` and `fetch`
can give ChatGPT an openable URL when no --docs-url-base is set.

The route never touches the file system: it asks the composition's lookup for a document by its
corpus-relative id, and the lookup knows only the documents it indexed. `..`, absolute paths and
encoded separators therefore name no document and get 404, whatever the disk holds.
"""

from __future__ import annotations

import time
from typing import Awaitable, Callable
from urllib.parse import unquote

import attrs

from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from .client_identity import client_identity
from .refusal_report import traceparent_trace_id
from .request import request_of

# id → (text, media type), None if unknown; awaited: the documents may still be loading (knowledge/service.py).
DocumentLookup = Callable[[str], Awaitable["tuple[str, str] | None"]]


@attrs.frozen(kw_only=True)
class DocsRead:
    """One answered request to the route, for the audit trail: who asked for which document, and what came back."""

    http_method: str
    path: str
    document_id: str | None
    status: int
    bytes: int
    client_id: str
    trace_id: str | None
    """The W3C trace id of the request's `traceparent` header, if any."""
    duration_s: float


class DocsRoute:
    def __init__(self, prefix: str, lookup: DocumentLookup, *, on_read: Callable[[DocsRead], None] | None = None) -> None:
        if not prefix.startswith("/") or not prefix.endswith("/"):
            raise ValueError(f"the docs route prefix must start and end with '/', got {prefix!r}")
        self.prefix = prefix
        self.lookup = lookup
        self.on_read = on_read
        """Told about every answered request (the audit trail's `docs_read`), if set."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        document_id, response = await self._answer(scope)
        try:
            await response(scope, receive, send)
        finally:  # a reader that left mid-answer was still answered: the line is written all the same
            if self.on_read is not None:
                request = request_of(scope)
                self.on_read(DocsRead(http_method=scope["method"], path=scope["path"], document_id=document_id,
                                      status=response.status_code, bytes=len(response.body),
                                      client_id=client_identity(request), trace_id=traceparent_trace_id(request),
                                      duration_s=time.perf_counter() - started))

    async def _answer(self, scope: Scope) -> tuple[str | None, PlainTextResponse]:
        if scope["method"] not in ("GET", "HEAD"):
            return None, PlainTextResponse("read-only: use GET", status_code=405, headers={"allow": "GET, HEAD"})
        raw = scope.get("raw_path", scope["path"].encode())
        document_id = unquote(raw.decode("latin-1").split("?", 1)[0][len(self.prefix):])
        found = await self.lookup(document_id) if document_id else None
        if found is None:
            return document_id, PlainTextResponse(f"no document {document_id!r}", status_code=404)
        text, media_type = found
        return document_id, PlainTextResponse(text, media_type=f"{media_type}; charset=utf-8")
