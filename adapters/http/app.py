"""The HTTP application: a path table, the middleware around it, and its lifecycle.

Routes: `{path}` (MCP Streamable HTTP, every version), `{path}/{method}` (REST dialect), `/health`, the
OAuth protected resource metadata when OAuth is configured, plus whatever `extra_routes` adds (the
WebSocket adapter mounts `/ws` there). The steps, in order: Host/Origin guard → CORS (only when
configured; it answers preflights) → authentication (`auth/`: the static token and/or OAuth access
tokens; not /health or the metadata) → body reading (POSTs to the MCP and REST endpoints, under a
deadline, so a stalled upload holds no slot) → OAuth scopes of the POSTed requests → concurrency cap
(not /health or /metrics) → router. They are steps of one function (`_serve`), not one middleware
object each: the MCP endpoint is the hot path, and a coroutine frame per layer would cost more than the
checks themselves. The router is a dict lookup.

Lifecycle: on startup the `on_startup` hooks run in the background (a model may take seconds to load;
/health says "starting" meanwhile) and the idle-session sweeper starts. A hook that fails sets `failure`:
/health says "failed" with the reason, and after FAILURE_LINGER_S `on_failure` (the runner's request to
stop) is called. `shutdown()` — called by
`run_http` when the server begins to stop, after the listening socket is closed — is the drain: /health
answers 503 "draining", new requests on open connections get 503, long-lived streams end, WebSocket calls
and HTTP requests already received finish (up to `drain_timeout_s`), then every session is closed.
"""

from __future__ import annotations

import asyncio
import ipaddress
from typing import Any, Awaitable, Callable, Mapping, Sequence

import structlog

from hexmcp.core import ErrorCode, McpServer, new_event_id
from hexmcp.wire import jsonrpc

from hexmcp.core.startup import failure_reason
from . import trace_headers
from .asgi import ASGIApp, Receive, Scope, Send
from .body import BodyBuffer
from .client_identity import client_identity
from .config import HttpConfig
from .endpoint import McpEndpoint
from .forwarded import TrustedProxies
from .guard import HostOriginGuard, Refusal, deny
from .health import HealthEndpoint, HealthFn, ReadyFn
from .json_body import readable_id
from .limits import ConcurrencyLimit, release_slot
from ..rpc_layer import REFUSAL_REPORTER
from .refusal_report import refusal_reporter
from .liveness import LIVENESS_PATH, liveness
from .refusals import refuse, refuse_upgrade
from .request import REQUEST, HttpRequest, request_of
from .rest import RestEndpoint

log = structlog.get_logger("hexmcp.adapters.http")

HEALTH_PATH = "/health"
METRICS_PATH = "/metrics"  # served when the composition root mounts it (adapters/telemetry); never capped
StartupHook = Callable[[], Awaitable[None]]
# How long /health keeps answering "failed" before the process stops, so a probe polling it can read why.
FAILURE_LINGER_S = 1.0
DRAIN_POLL_S = 0.05  # how often the drain looks at the in-flight count (only while stopping)
CUT_GRACE_S = 0.5  # how long the drain waits for the answers of the requests it cut at its deadline
CORS_HEADERS = ["Authorization", "Content-Type", "Accept", "Mcp-Session-Id", "MCP-Protocol-Version", "Mcp-Method",
                "Mcp-Name", "Last-Event-ID"]


class HttpApp:
    def __init__(self, server: McpServer, config: HttpConfig, *, health: HealthFn | None = None,
                 ready: ReadyFn | None = None, on_startup: Sequence[StartupHook] = (),
                 extra_routes: Mapping[str, ASGIApp] | None = None, capture_trace_headers: bool = False) -> None:
        self.server = server
        self._capture_trace_headers = capture_trace_headers
        self.config = config
        jsonrpc.install_task_errors(server)
        self.mcp = McpEndpoint(server, config)
        self.rest = RestEndpoint(server, config)
        self.failure: str | None = None
        self.on_failure: Callable[[], None] | None = None  # set by the runner: stop serving
        self.health = HealthEndpoint(version=server.info.version, health=health, ready=ready,
                                     failure=lambda: self.failure, draining=lambda: self.stopping,
                                     details_for=self._health_details)
        self.routes: dict[str, ASGIApp] = {config.path: self.mcp, HEALTH_PATH: self.health}
        # Who may call: the static token and/or OAuth access tokens (auth/, imported only when configured);
        # None: anyone.
        self.authenticator: Any = None
        self._scopes: Any = None  # the OAuth scope policy (auth/scopes.py)
        self._open_paths = {HEALTH_PATH, LIVENESS_PATH}
        if config.auth_token is not None or config.oauth is not None:
            from .auth import build_authenticator
            from .auth.metadata import ProtectedResourceMetadata, metadata_paths

            self.authenticator = build_authenticator(token=config.auth_token, token_name=config.auth_token_name,
                                                     oauth=config.oauth)
            self._scopes = self.authenticator.policy
            if config.oauth is not None:
                prm = ProtectedResourceMetadata(config.oauth, self._scopes.all_scopes)
                for path in metadata_paths(config.oauth, config.path):
                    self.routes[path] = prm
                    self._open_paths.add(path)
        self._auth_required = self.authenticator is not None  # no auth: the hot path skips the call
        self._proxies = TrustedProxies(config.trusted_proxies) if config.trusted_proxies else None
        self.routes[LIVENESS_PATH] = liveness  # the liveness probe's: open, uncapped, served while draining
        self._extra_routes = list((extra_routes or {}).values())
        # A route whose path ends in "/" serves everything under it (the knowledge base's /docs/).
        self._prefix_routes = [(path, app) for path, app in (extra_routes or {}).items() if path.endswith("/")]
        for path, app in (extra_routes or {}).items():
            if path in self.routes:
                raise ValueError(f"route {path!r} is already taken")
            self.routes[path] = app
        self._rest_prefix = config.path + "/"
        self._on_startup = list(on_startup)
        self._background: set[asyncio.Task[Any]] = set()
        self.stopping = False

        self.limit = ConcurrencyLimit(limit=config.max_concurrent_requests,
                                      exempt_paths=[HEALTH_PATH, METRICS_PATH, LIVENESS_PATH])
        for route in self._extra_routes:  # the WebSocket endpoint: its calls count against the same cap
            share = getattr(route, "share_concurrency", None)
            if share is not None:
                share(self.limit)
        self.bodies = BodyBuffer(mcp_path=config.path, limit=config.max_body_bytes, timeout_s=config.body_timeout_s)
        self.guard = HostOriginGuard(bound_host=config.host, allowed_hosts=config.allowed_hosts,
                                     allowed_origins=[*config.allowed_origins, *config.cors_origins])
        self._after_guard: ASGIApp = self._serve
        if config.cors_origins:  # between the guard and auth, so a preflight (no credentials) is answered
            from starlette.middleware.cors import CORSMiddleware

            self._after_guard = CORSMiddleware(self._serve, allow_origins=list(config.cors_origins),
                                               allow_methods=["GET", "POST", "DELETE"], allow_headers=CORS_HEADERS,
                                               expose_headers=["Mcp-Session-Id"], max_age=600)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if self._capture_trace_headers:
            trace_headers.capture(scope)
        if kind != "http" and kind != "websocket":
            await self._after_guard(scope, receive, send)
            return
        request = scope[REQUEST] = request_of(scope)  # the protocol's, or made here; passed on explicitly
        if self.server.refusal_observers:  # the audit trail hears every refusal of this request
            REFUSAL_REPORTER.set(refusal_reporter(self.server.refusal_observers, request, self._rest_prefix))
        try:
            refused = self.guard.denial(request)
            if refused is not None:
                await deny(scope, send, refused)
                return
            await self._after_guard(scope, receive, send)
        finally:
            del scope[REQUEST]  # request and scope hold each other: parted, both go when the request does

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Auth → body → concurrency cap → route, for a request the guard (and CORS) let through."""
        request: HttpRequest = scope[REQUEST]
        if self._proxies is not None:
            request.proxies = self._proxies
        if self._auth_required:
            refused = await self._authenticate(request)
            if refused is not None:
                await deny(scope, send, refused)
                return
        if scope["type"] != "http":
            await self._route(request, receive, send)
            return
        if not await self.bodies.read(request, receive, send):
            return
        if self._scopes is not None and request.body is not None and request.principal is not None:
            refused = self._scope_denial(request)
            if refused is not None:
                await deny(scope, send, refused)
                return
        if scope["path"] in self.limit.exempt:
            await self._route(request, receive, send)
            return
        if not self.limit.take(request):
            await self.limit.refuse(request, send)
            return
        try:
            await self._route(request, receive, send)
        finally:
            release_slot(request)

    async def _authenticate(self, request: HttpRequest) -> Refusal | None:
        """Set `request.principal`, or the refusal (401, or 403 for a WebSocket lacking scopes). An open path
        (/health, the resource metadata) needs no credentials; /health still notes valid ones (its details)."""
        authenticator = self.authenticator
        assert authenticator is not None
        scope = request.scope
        if scope["path"] in self._open_paths:
            if scope["path"] == HEALTH_PATH and request.header(b"authorization") is not None:
                found = await authenticator.authenticate(request)
                if not isinstance(found, Refusal):
                    request.principal = found
            return None
        found = await authenticator.authenticate(request)
        if isinstance(found, Refusal):
            return found
        request.principal = found
        if scope["type"] == "websocket" and self._scopes is not None:
            # A socket's messages are not checked one by one: opening one needs every scope there is.
            return authenticator.insufficient_scope(found, self._scopes.all_scopes)
        return None

    def _scope_denial(self, request: HttpRequest) -> Refusal | None:
        """403 when the authenticated principal lacks a scope the POSTed request(s) need."""
        principal = request.principal
        if principal.scopes is None:
            return None  # the static token: every scope
        assert self._scopes is not None and self.authenticator is not None
        body = request.body or b""
        path = request.scope["path"]
        try:
            value = jsonrpc.decode(body) if body.strip() else None
        except ValueError:
            return None  # the endpoint answers the parse error; nothing runs
        if path == self.config.path:
            needed = self._scopes.needed_by_messages(value)
        elif path.startswith(self._rest_prefix):
            needed = self._scopes.needed_by_rest(path[len(self._rest_prefix):], value)
        else:
            return None
        return self.authenticator.insufficient_scope(principal, needed)

    def _health_details(self, request: HttpRequest | None) -> bool:
        """Whether /health may show more than its status: to an authenticated caller when authentication is
        configured; without it, to callers on this machine (a probe only needs the status code)."""
        if request is None:
            return False
        if self._auth_required:
            return request.principal is not None
        address = client_identity(request).removeprefix("address:")
        try:
            return ipaddress.ip_address(address).is_loopback
        except ValueError:
            return False

    def background_tasks(self) -> list[Callable[[], Awaitable[Any]]]:
        return self.authenticator.background() if self.authenticator is not None else []

    def _route(self, request: HttpRequest, receive: Receive, send: Send) -> Awaitable[None]:
        """The awaitable that answers the request: its route's, or a refusal (a plain function returning
        it, so the hot path pays no coroutine frame for a dict lookup)."""
        scope = request.scope
        path = scope["path"]
        http = scope["type"] == "http"
        app = self.routes.get(path)
        if app is None and http:
            if path.startswith(self._rest_prefix):
                app = self.rest
            else:
                app = next((route for prefix, route in self._prefix_routes if path.startswith(prefix)), None)
        if app is None:
            if not http:
                return refuse_upgrade(scope, send, ErrorCode.METHOD_NOT_FOUND, f"Not found: {path}")
            return refuse(send, ErrorCode.METHOD_NOT_FOUND, f"Not found: {path}", status=404)
        if self.stopping and http and path != HEALTH_PATH and path != LIVENESS_PATH and request.kept_alive:
            # A connection's first request was sent before the listener closed: it is served.
            return refuse(send, ErrorCode.SERVER_BUSY, "The server is shutting down", headers=[(b"retry-after", b"5")],
                          request_id=readable_id(request))
        return app(scope, receive, send)

    def endpoints(self) -> list[str]:
        """The paths served, as the start-up line names them: MCP, its REST dialect, the extra routes, /health."""
        extra = [path for path in self.routes if path not in (self.config.path, HEALTH_PATH, LIVENESS_PATH)]
        return [self.config.path, f"{self._rest_prefix}{{method}}", *extra, HEALTH_PATH]

    # --- lifecycle -------------------------------------------------------------------------------

    async def startup(self) -> None:
        for hook in self._on_startup:
            self._spawn(self._run_hook(hook))
        for work in self.background_tasks():  # the issuer's keys, fetched before the first token needs them
            self._spawn(work())
        if not self.config.stateless:
            self._spawn(self.mcp.sessions.run_sweeper())

    async def shutdown(self) -> None:
        """Drain (idempotent): end long-lived streams, let in-flight requests and WebSocket calls finish
        within `drain_timeout_s`, then end every session."""
        if self.stopping:
            return
        self.stopping = True
        log.info("draining", inFlight=self.limit.in_flight, drainTimeoutS=self.config.drain_timeout_s)
        began = asyncio.get_running_loop().time()
        self.bodies.stop()  # uploads still arriving end soon (503), not when uvicorn's grace period runs out
        await self.mcp.stateless_era.end_streams()
        # Extra routes (the WebSocket endpoint) answer their in-flight work and close politely before the
        # core closes their sessions under them; HTTP requests finish meanwhile, under the same deadline.
        stops = [stop() for route in self._extra_routes if (stop := getattr(route, "shutdown", None)) is not None]
        cut, *_ = await asyncio.gather(self._requests_finished(), *stops)
        await self.server.shutdown()  # ends subscriptions/listen streams with their final result
        await self.mcp.sessions.close_all()  # ends GET streams; pending client requests fail
        for task in list(self._background):
            task.cancel()
        # The operator's last word from the app: whether the drain served everything or cut some of it.
        log.info("drained", cut=cut, seconds=round(asyncio.get_running_loop().time() - began, 3))

    async def _requests_finished(self) -> int:
        """Return when no HTTP request holds a slot or is still sending its body, or when the drain deadline passes:
        how many were left. Those are cut then, each answered -32005 (503) naming the drain (`_cut_requests`)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.drain_timeout_s
        while (self.limit.in_flight or self.bodies.reading) and loop.time() < deadline:
            await asyncio.sleep(DRAIN_POLL_S)
        cut = self.limit.in_flight
        if cut:
            log.warning("drain deadline passed with requests in flight; cutting them", inFlight=cut)
            await self._cut_requests()
        return cut

    async def _cut_requests(self) -> None:
        """Time out every request still running, now, with the drain as the reason: each answers -32005 naming
        it, as a request past its own deadline answers -32001. Left to uvicorn, whose graceful timeout is the
        same deadline, they were cancelled under it: a bare 500 and "Exception in ASGI application" in the log.
        Waits (at most CUT_GRACE_S) for their answers to be written. Requests under no deadline (none is
        configured, or a subscriptions/listen stream, which `server.shutdown` ends) are not cut here."""
        reason = f"The server is shutting down: the drain deadline ({self.config.drain_timeout_s:g} s) passed"
        for deadlines in (self.mcp.handshake_era.deadlines, self.mcp.stateless_era.deadlines, self.rest.deadlines):
            deadlines.expire_all(reason)
        loop = asyncio.get_running_loop()
        until = loop.time() + CUT_GRACE_S
        while self.limit.in_flight and loop.time() < until:
            await asyncio.sleep(DRAIN_POLL_S)

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _run_hook(self, hook: StartupHook) -> None:
        try:
            await hook()
        except Exception as error:
            event_id = new_event_id()
            log.exception("startup hook failed; the server will stop", eventId=event_id)
            self.failure = failure_reason(error, event_id)
            await asyncio.sleep(FAILURE_LINGER_S)
            if self.on_failure is not None:
                self.on_failure()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception:
                    log.exception("startup failed", eventId=new_event_id())
                    await send({"type": "lifespan.startup.failed", "message": "startup failed; see the log"})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return


def create_app(server: McpServer, config: HttpConfig | None = None, *, health: HealthFn | None = None,
               ready: ReadyFn | None = None, on_startup: Sequence[StartupHook] = (),
               extra_routes: Mapping[str, ASGIApp] | None = None, capture_trace_headers: bool = False) -> HttpApp:
    """The ASGI application serving `server` over HTTP.

    `health()` adds fields to /health (categories, model, index size, ...); `ready()` gates its "ok";
    `on_startup` hooks run in the background once the server is up (e.g. loading a model);
    `extra_routes` adds exact-path ASGI apps (e.g. `{"/ws": websocket_app}`), behind the same guards;
    `capture_trace_headers` hands each request's W3C trace headers to tracing (`trace_headers.py`).
    """
    return HttpApp(server, config or HttpConfig(), health=health, ready=ready, on_startup=on_startup,
                   extra_routes=extra_routes, capture_trace_headers=capture_trace_headers)
