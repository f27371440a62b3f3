"""Metrics and tracing flags, and their wiring.

`hexmcp serve` measures by default and serves `/metrics` on its own port (`--no-metrics`: neither);
`hexmcp stdio` has no HTTP, so it measures only when `--metrics-port` asks for prometheus-client's own
small HTTP server. Tracing has no flag: the standard OTEL_* variables turn it on (tracing_env.py).
Nothing of prometheus-client or the OpenTelemetry SDK is imported for a part that is off.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, NoReturn, Sequence

import attrs

from hexmcp.core import McpServer
from hexmcp.core.pack import Pack

from hexmcp.core.startup import ExitCode


def add_telemetry_arguments(parser: argparse.ArgumentParser, *, stdio: bool = False) -> None:
    group = parser.add_argument_group("metrics and tracing (tracing is configured by the OTEL_* variables)")
    if stdio:
        group.add_argument("--metrics-port", type=_port, default=None, metavar="PORT",
                           help="serve Prometheus metrics at http://HOST:PORT/metrics (default: no metrics)")
        group.add_argument("--metrics-host", default="127.0.0.1", metavar="HOST",
                           help="interface for --metrics-port (default 127.0.0.1: local only)")
    else:
        group.add_argument("--no-metrics", action="store_true",
                           help="do not measure and do not serve /metrics (default: /metrics on the server's port)")


@attrs.define
class Telemetry:
    routes: dict[str, Any] = attrs.Factory(dict)
    """HTTP routes to mount (/metrics) with `hexmcp serve`."""
    capture_trace_headers: bool = False
    """Tracing is on: the HTTP app hands each request's W3C headers over (a parent when `_meta` has none)."""
    stops: list[Callable[[], None]] = attrs.Factory(list)

    def close(self) -> None:
        """Flush spans still queued and stop the stdio metrics server (at exit; never raises)."""
        for stop in self.stops:
            try:
                stop()
            except Exception as error:  # an unreachable collector must not change the exit status
                print(f"hexmcp: telemetry did not stop cleanly: {error}", file=sys.stderr)


def install_telemetry(server: McpServer, args: argparse.Namespace, *, version: str,
                      packs: Sequence[Pack] = ()) -> Telemetry:
    """Register the observers the flags and the environment ask for. A bad OTEL_* value or a metrics port
    that cannot be bound stops start-up (exit 2) with the one line saying why."""
    from hexmcp.adapters.telemetry.tracing_env import TracingConfigError, tracing_settings

    telemetry = Telemetry()
    try:
        settings = tracing_settings(os.environ)
    except TracingConfigError as error:
        _stop_start_up(args.command, str(error))
    if settings is not None:
        from .extras import missing

        if (absent := missing(("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"))) is not None:
            from .extras import extra_problem

            _stop_start_up(args.command, extra_problem("tracing (the OTEL_* variables)", "otel", absent).line)
        from hexmcp.adapters.telemetry.tracing import start_tracing

        observer, shutdown = start_tracing(settings, service_version=version)
        server.add_observer(observer)
        telemetry.capture_trace_headers = True
        telemetry.stops.append(shutdown)
    metrics_port = getattr(args, "metrics_port", None)
    if getattr(args, "no_metrics", False) or (args.command == "stdio" and metrics_port is None):
        return telemetry
    registry = _metrics_registry(server, packs)
    if args.command == "stdio":
        from prometheus_client import start_http_server

        try:
            http_server, _ = start_http_server(metrics_port, addr=args.metrics_host, registry=registry)
        except OSError as error:
            _stop_start_up(args.command, f"--metrics-port {metrics_port}: cannot listen on "
                                         f"{args.metrics_host}:{metrics_port} ({error.strerror or error})")
        telemetry.stops.append(http_server.shutdown)
    else:
        from hexmcp.adapters.telemetry.endpoint import METRICS_PATH, MetricsEndpoint

        telemetry.routes[METRICS_PATH] = MetricsEndpoint(registry)
    return telemetry


def _metrics_registry(server: McpServer, packs: Sequence[Pack]) -> Any:
    from prometheus_client import CollectorRegistry, ProcessCollector

    from hexmcp.adapters.telemetry.metrics import MetricsObserver, OpenSessions
    from hexmcp.adapters.telemetry.tool_metrics import PackMetrics

    registry = CollectorRegistry()
    ProcessCollector(registry=registry)  # RSS, open descriptors, CPU: what a soak watches
    server.add_observer(MetricsObserver(server, registry))
    registry.register(OpenSessions(server))
    for pack in packs:
        registry.register(PackMetrics(pack))
    return registry


def _stop_start_up(command: str, line: str) -> NoReturn:
    print(f"hexmcp {command}: {line}", file=sys.stderr, flush=True)
    raise SystemExit(ExitCode.USAGE)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a port number, got {text!r}") from None
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError(f"must be a port number (1-65535), got {value}")
    return value
