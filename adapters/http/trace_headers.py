"""The W3C trace headers of the HTTP request (or WebSocket upgrade) being served, for tracing.

MCP requests carry their trace context in `params._meta`; when a client sets only the HTTP headers
(`traceparent`, `tracestate`, `baggage`), tracing uses those as the parent instead. The app puts them in a
context variable before any request task is spawned, so every task serving that HTTP request (a batch's
items, a WebSocket connection's requests) inherits them; the core never sees HTTP. Only done when
tracing is on (`create_app(capture_trace_headers=True)`), so an untraced server pays nothing.
"""

from __future__ import annotations

import contextvars
from typing import Any, MutableMapping

W3C_HEADERS = frozenset({b"traceparent", b"tracestate", b"baggage"})

incoming: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("hexmcp_http_trace_headers",
                                                                                 default=None)


def capture(scope: MutableMapping[str, Any]) -> None:
    """Set `incoming` for this request's context: its W3C headers by lower-case name, or None."""
    found = {name.decode("latin-1"): value.decode("latin-1")
             for name, value in scope.get("headers", ()) if name in W3C_HEADERS}
    incoming.set(found or None)
