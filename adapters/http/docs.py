"""`GET /docs/<path>`: a read-only view of the knowledge base's documents, so `search` and `fetch`
can give ChatGPT an openable URL when no --docs-url-base is set.

The route never touches the file system: it asks the composition's lookup for a document by its
corpus-relative id, and the lookup knows only the documents it indexed. `..`, absolute paths and
encoded separators therefore name no document and get 404, whatever the disk holds.
"""

from __future__ import annotations

from typing import Awaitable, Callable
from urllib.parse import unquote

from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

# id → (text, media type), None if unknown; awaited: the documents may still be loading (knowledge/service.py).
DocumentLookup = Callable[[str], Awaitable["tuple[str, str] | None"]]


class DocsRoute:
    def __init__(self, prefix: str, lookup: DocumentLookup) -> None:
        if not prefix.startswith("/") or not prefix.endswith("/"):
            raise ValueError(f"the docs route prefix must start and end with '/', got {prefix!r}")
        self.prefix = prefix
        self.lookup = lookup

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            response = PlainTextResponse("read-only: use GET", status_code=405, headers={"allow": "GET, HEAD"})
            await response(scope, receive, send)
            return
        raw = scope.get("raw_path", scope["path"].encode())
        document_id = unquote(raw.decode("latin-1").split("?", 1)[0][len(self.prefix):])
        found = await self.lookup(document_id) if document_id else None
        if found is None:
            await PlainTextResponse(f"no document {document_id!r}", status_code=404)(scope, receive, send)
            return
        text, media_type = found
        await PlainTextResponse(text, media_type=f"{media_type}; charset=utf-8")(scope, receive, send)
