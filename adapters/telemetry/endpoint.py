"""`GET /metrics`: the registry in the Prometheus text format, on the HTTP server's own port.

Mounted by the composition root as one of the HTTP app's routes, so it sits behind the same Host/Origin
guard as every route and behind the bearer token when one is configured (Prometheus sends one with
`authorization: {credentials: ...}` in its scrape config); like /health it is exempt from the
concurrency cap, so a saturated server can still be scraped.
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from ..http.app import METRICS_PATH
from ..http.asgi import Receive, Scope, Send
from ..http.responses import respond

__all__ = ["METRICS_PATH", "MetricsEndpoint"]


class MetricsEndpoint:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            await respond(send, 405, b"", headers=[(b"allow", b"GET, HEAD")])
            return
        body = b"" if scope["method"] == "HEAD" else generate_latest(self.registry)
        await respond(send, 200, body, content_type=CONTENT_TYPE_LATEST.encode(),
                      headers=[(b"cache-control", b"no-store")])
