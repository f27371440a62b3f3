"""Serving a composition: over HTTP (Streamable HTTP, the REST dialect, WebSocket, /health, /metrics, the
packs' document routes) or over stdio. What both share — the tasks store, the packs (mounted upstreams
among them), telemetry, the guards — is put together once, in `Serving.build`."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from typing import Any, Callable

import attrs

from hexmcp.core import McpServer, ServerOptions
from hexmcp.core.startup import ExitCode
from hexmcp.core.pack import BackgroundTask, Pack, PackProblem

from .client_answers import client_request_timeout
from .compose import Composition, compose
from .guard import audit_of, install_guards
from .session_caps import apply_session_caps
from .tasks import configure_tasks
from .telemetry import Telemetry, install_telemetry

VERSION = "0.1.0"
INSTRUCTIONS = (
    "hexmcp serves semantic classification for LLM routers. Call list_categories to learn the taxonomy, "
    "then classify_text to get the category, a confidence, a recommended model and whether to use reasoning."
)


@attrs.define
class Serving:
    composition: Composition
    telemetry: Telemetry
    close_guards: Callable[[], None]
    background: list[BackgroundTask]

    @classmethod
    def build(cls, settings: argparse.Namespace, packs: list[Pack], *, server: McpServer | None = None,
              http_base: str | None = None) -> Serving:
        """Compose `packs` on `server` (default: hexmcp's own), then what observes and guards it."""
        server = server or new_server(settings)
        apply_session_caps(server, settings)
        if hasattr(settings, "task_store"):
            configure_tasks(server, settings)
        composition = compose(server, settings, packs, command=settings.command, http_base=http_base)
        # Telemetry observes first: a request the guards refuse still gets its duration sample and its span.
        telemetry = install_telemetry(server, settings, version=server.info.version, packs=composition.packs)
        close_guards = install_guards(server, settings, composition.versions)
        return cls(composition, telemetry, close_guards, composition.start_up_hooks())

    @property
    def server(self) -> McpServer:
        return self.composition.server

    def close(self) -> None:
        self.close_guards()
        self.composition.close()
        self.telemetry.close()


def composed(settings: argparse.Namespace) -> Composition:
    """hexmcp's server with every installed pack the settings enable, as `serve` and `stdio` compose it
    (without telemetry or guards, and with no background work started): what tests and tools inspect."""
    from .packs import installed_packs

    return compose(new_server(settings), settings, installed_packs(), command=settings.command)


def new_server(settings: argparse.Namespace) -> McpServer:
    """hexmcp's own server (`serve` shares its multi round-trip state key through $HEXMCP_STATE_SECRET)."""
    secret = os.environ.get("HEXMCP_STATE_SECRET") if settings.command == "serve" else None
    return McpServer("hexmcp", VERSION, title="hexmcp", instructions=INSTRUCTIONS,
                     options=ServerOptions(request_state_secret=secret.encode() if secret else None))


def serve_http(settings: argparse.Namespace, packs: list[Pack], *, server: McpServer | None = None) -> int:
    from hexmcp.adapters.http import CannotListen, run_http

    from .scale import listening_sockets

    config = http_config(settings)
    sockets = listening_sockets()
    # The settings' own mistakes (a pack they ask for and cannot have) are named before the machine's state.
    serving = Serving.build(settings, packs, server=server, http_base=f"http://{settings.host}:{settings.port}")
    try:
        if not sockets:  # a worker serves on its parent's socket, bound and checked there
            _exit_if_cannot_listen(config.host, config.port)
        options = _http_app_options(serving, config)
        return run_http(serving.server, config, log_level="warning",
                        uvicorn_options=options.pop("websocket").config.uvicorn_options(), **sockets,
                        **options)
    except CannotListen as failure:  # taken between the check above and the bind: the check's line and status
        print(f"hexmcp serve: cannot listen on {settings.host}:{settings.port}: {failure.reason}", file=sys.stderr,
              flush=True)
        return ExitCode.USAGE
    finally:
        serving.close()


def _exit_if_cannot_listen(host: str, port: int) -> None:
    from .start.listen_check import why_cannot_listen

    reason = why_cannot_listen(host, port)
    if reason is not None:
        print(f"hexmcp serve: {reason}", file=sys.stderr, flush=True)
        raise SystemExit(ExitCode.USAGE)


def http_app(settings: argparse.Namespace, packs: list[Pack], *, server: McpServer | None = None) -> Any:
    """The HTTP app `serve_http` runs, for a host application's own server (`hexmcp.Server.http_app`)."""
    from hexmcp.adapters.http import create_app

    config = http_config(settings)
    serving = Serving.build(settings, packs, server=server, http_base=None)
    options = _http_app_options(serving, config)
    del options["websocket"]
    return create_app(serving.server, config, **options)


def _http_app_options(serving: Serving, config: Any) -> dict[str, Any]:
    from hexmcp.adapters.http.docs import DocsRoute
    from hexmcp.adapters.ws import WsConfig, WsEndpoint

    composition = serving.composition
    websocket = WsEndpoint(serving.server, WsConfig.from_http(config))
    audit = audit_of(serving.server)
    documents = {prefix: DocsRoute(prefix, lookup, on_read=audit.docs_read if audit is not None else None)
                 for prefix, lookup in composition.documents().items()}
    return {"websocket": websocket, "extra_routes": {"/ws": websocket, **documents, **serving.telemetry.routes},
            "capture_trace_headers": serving.telemetry.capture_trace_headers, "ready": composition.ready,
            "health": composition.health, "on_startup": serving.background}


def http_config(settings: argparse.Namespace) -> Any:
    """The HTTP adapter's settings; PackProblem (a usage error) for a combination it refuses."""
    from hexmcp.adapters.http import HttpConfig

    try:
        return HttpConfig(host=settings.host, port=settings.port, stateless=settings.stateless,
                          auth_token=settings.auth_token or None, allowed_origins=settings.allowed_origins,
                          allowed_hosts=settings.allowed_hosts, cors_origins=settings.cors_origins,
                          max_body_bytes=settings.max_body_bytes, request_timeout_s=settings.request_timeout,
                          body_timeout_s=settings.body_timeout, max_concurrent_requests=settings.max_concurrent_requests,
                          max_sessions=settings.max_sessions, session_idle_timeout_s=settings.session_idle_timeout,
                          head_timeout_s=settings.head_timeout,
                          max_head_bytes=settings.max_head_bytes, max_batch_messages=settings.max_batch_messages,
                          max_sessions_per_client=settings.max_sessions_per_client,
                          max_streams=settings.max_streams, max_streams_per_client=settings.max_streams_per_client,
                          stream_idle_timeout_s=settings.stream_idle_timeout or None,
                          replay_bytes_per_session=settings.replay_bytes_per_session,
                          replay_bytes_per_client=settings.replay_bytes_per_client,
                          replay_bytes_total=settings.replay_bytes_total,
                          replay_retention_s=settings.replay_retention,
                          max_connections_per_address=settings.max_connections_per_address,
                          max_connections=settings.max_connections, drain_timeout_s=settings.drain_timeout,
                          client_request_timeout_s=client_request_timeout(settings),
                          **auth_settings(settings))
    except ValueError as error:
        raise PackProblem(str(error)) from None


def auth_settings(settings: argparse.Namespace) -> dict[str, Any]:
    """HttpConfig's identity and OAuth settings from the flags (ValueError for a combination that cannot work)."""
    from hexmcp.adapters.http.auth.config import OAuthConfig
    from hexmcp.adapters.http.auth.scopes import ScopePolicy

    found: dict[str, Any] = {"auth_token_name": getattr(settings, "auth_token_name", "token"),
                             "trusted_proxies": getattr(settings, "trusted_proxies", None) or ()}
    issuer = getattr(settings, "oauth_issuer", None)
    if not issuer:
        return found
    if not settings.oauth_resource:
        raise ValueError("--oauth-issuer needs --oauth-resource, this server's URI as clients reach it")
    if settings.oauth_validation == "jwt" and importlib.util.find_spec("jwt") is None:
        raise ValueError("--oauth-issuer checks JWTs with PyJWT: pip install 'hexmcp[oauth]'")
    secret = os.environ.get("HEXMCP_OAUTH_CLIENT_SECRET")
    if settings.oauth_client_secret_file:
        try:
            with open(settings.oauth_client_secret_file, encoding="utf-8") as file:
                secret = file.read().strip()
        except OSError as error:
            raise ValueError(f"--oauth-client-secret-file: {error}") from None
    found["oauth"] = OAuthConfig(issuer=issuer, resource=settings.oauth_resource, audiences=settings.oauth_audience,
                                 validation=settings.oauth_validation, jwks_url=settings.oauth_jwks_url,
                                 introspection_url=settings.oauth_introspection_url,
                                 client_id=settings.oauth_client_id, client_secret=secret or None,
                                 scopes=ScopePolicy.parse(settings.oauth_scopes), leeway_s=settings.oauth_leeway)
    return found


def run_stdio_serving(serving: Serving, settings: argparse.Namespace, *, wire_fd: int) -> int:
    """Serve stdio; the start-up work begins once the input already waiting (the host's initialize) is answered."""
    from hexmcp.adapters.stdio import run_stdio

    try:
        return run_stdio(serving.server, max_message_bytes=settings.max_message_bytes,
                         max_batch_messages=settings.max_batch_messages, wire_fd=wire_fd,
                         on_startup=serving.background, peer_timeout_s=client_request_timeout(settings))
    finally:
        serving.close()
