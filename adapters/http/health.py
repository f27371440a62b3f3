"""`/health`: liveness and readiness in one small JSON document, open without a token.

200 with `status: "ok"` only once `ready()` is true; before that 503 with `status: "starting"`, so a
load balancer or an orchestrator's readiness probe never sends traffic to an instance still loading
its model. Once `failure()` names a reason (start-up work failed), 503 with `status: "failed"` and that
`reason`, until the process exits. Once the server is stopping (SIGTERM), 503 with `status: "draining"`, so a
balancer stops sending new work while the requests already received finish. The body merges what the composition root's `health()` reports (categories, model, index
size) with the server's version, uptime and process id (`pid`: which worker of `serve --workers N` answered).

Those details (a gateway URL, upstream errors, the pid, index versions) are for the operator: a caller
`details_for` does not admit (the HTTP app admits authenticated callers, or local ones when no
authentication is configured) gets the status alone, with the same status code.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable, Mapping

import structlog

from hexmcp.core import new_event_id

from .asgi import Receive, Scope, Send
from .request import REQUEST, HttpRequest
from .responses import respond

log = structlog.get_logger("hexmcp.adapters.http")

HealthFn = Callable[[], Mapping[str, Any]]
ReadyFn = Callable[[], bool]
FailureFn = Callable[[], str | None]
DrainingFn = Callable[[], bool]
DetailsFn = Callable[[HttpRequest | None], bool]


class HealthEndpoint:
    def __init__(self, *, version: str, health: HealthFn | None = None, ready: ReadyFn | None = None,
                 failure: FailureFn | None = None, draining: DrainingFn | None = None,
                 details_for: DetailsFn | None = None) -> None:
        self._version = version
        self._health = health
        self._ready = ready
        self._failure = failure
        self._draining = draining
        self._details_for = details_for
        self._started = time.monotonic()

    def report(self) -> tuple[int, dict[str, Any]]:
        reason = self._failure() if self._failure is not None else None
        if reason is not None:
            return 503, {"status": "failed", "reason": reason, "version": self._version}
        if self._draining is not None and self._draining():
            return 503, {"status": "draining", "version": self._version, "pid": os.getpid()}
        try:
            ready = self._ready() if self._ready is not None else True
            details = dict(self._health()) if self._health is not None else {}
        except Exception:
            event_id = new_event_id()
            log.exception("health check failed", eventId=event_id)
            return 503, {"status": "error", "eventId": event_id}
        body = {**details, "status": "ok" if ready else "starting", "version": self._version,
                "uptime_s": round(time.monotonic() - self._started, 3), "pid": os.getpid()}
        return (200 if ready else 503), body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            await respond(send, 405, b"", headers=[(b"allow", b"GET, HEAD")])
            return
        status, body = self.report()
        if self._details_for is not None and not self._details_for(scope.get(REQUEST)):
            body = {"status": body["status"]}
        payload = b"" if scope["method"] == "HEAD" else json.dumps(body, separators=(",", ":")).encode()
        await respond(send, status, payload, headers=[(b"cache-control", b"no-store")])
