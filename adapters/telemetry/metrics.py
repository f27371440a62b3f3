"""Prometheus metrics of MCP operations and sessions, in the OpenTelemetry MCP conventions' names.

`MetricsObserver` is a `RequestObserver` (core/observation.py): it times every admitted request into
`mcp_server_operation_duration_seconds` and every session that ends into
`mcp_server_session_duration_seconds` (OTel name -> Prometheus name: dots become underscores and the
unit `s` becomes the `_seconds` suffix, as the OTel-to-Prometheus compatibility spec says),
counts requests in flight per transport, and at scrape time counts the sessions still open per transport.

Label values are bounded: the method is one the core admitted (its route table), and a tool name is a
label only when a tool of that name is registered; a client asking for made-up tools would otherwise
mint a time series per name. Those become `_OTHER`, the conventions' fallback value.

The design and its trade-offs: docs/adr/0901-prometheus-metrics.md.
"""

from __future__ import annotations

from typing import Any, Iterator

from prometheus_client import CollectorRegistry, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from hexmcp.core import McpServer
from hexmcp.core.observation import ObservedOutcome, ObservedRequest, ObservedSession

from . import conventions as semconv

OTHER = "_OTHER"
OPERATION_LABELS = ("mcp_method_name", "gen_ai_tool_name", "error_type", "network_transport", "network_protocol_name",
                    "mcp_protocol_version")
SESSION_LABELS = ("network_transport", "network_protocol_name", "mcp_protocol_version")
TRANSPORT_LABEL = "hexmcp_transport"
"""hexmcp's own transport name (stdio, http, rest, ws): finer than network.transport, for capacity gauges."""
# Sessions bound to a connection are sessions even without an initialize (a 2026-07-28 WebSocket);
# HTTP's per-request sessions are sessions only when a handshake opened them.
CONNECTION_TRANSPORTS = frozenset({"stdio", "ws"})


class MetricsObserver:
    def __init__(self, server: McpServer, registry: CollectorRegistry) -> None:
        self._tools = server.tools
        self.operation = Histogram("mcp_server_operation_duration", "MCP request duration as observed on the server "
                                   "(mcp.server.operation.duration)", OPERATION_LABELS, unit="seconds",
                                   buckets=semconv.DURATION_BUCKETS_S, registry=registry)
        self.session = Histogram("mcp_server_session_duration", "MCP session duration as observed on the server "
                                 "(mcp.server.session.duration)", SESSION_LABELS, unit="seconds",
                                 buckets=semconv.DURATION_BUCKETS_S, registry=registry)
        self.in_flight = Gauge("hexmcp_requests_in_flight", "MCP requests being served", (TRANSPORT_LABEL,),
                               registry=registry)
        # labels() takes a lock and builds a key each time; a request's children are looked up once here.
        self._operations: dict[tuple[str, ...], Any] = {}
        self._in_flight: dict[str, Any] = {}

    def request_started(self, request: ObservedRequest) -> _OperationScope:
        transport = request.transport or ""
        gauge = self._in_flight.get(transport)
        if gauge is None:
            gauge = self._in_flight[transport] = self.in_flight.labels(transport)
        gauge.inc()
        return _OperationScope(self, request, gauge)

    def finished(self, request: ObservedRequest, outcome: ObservedOutcome) -> None:
        tool = ""
        if request.method == "tools/call" and request.target is not None:
            tool = request.target if request.target in self._tools else OTHER
        key = (request.method, tool, semconv.error_type(outcome), *semconv.network(request.transport),
               request.protocol_version)
        child = self._operations.get(key)
        if child is None:
            child = self._operations[key] = self.operation.labels(*key)
        child.observe(outcome.duration_s)

    def session_ended(self, session: ObservedSession) -> None:
        if session.handshake or session.transport in CONNECTION_TRANSPORTS:
            self.session.labels(*semconv.network(session.transport), session.protocol_version or "").observe(
                session.duration_s)


class _OperationScope:
    __slots__ = ("_observer", "_request", "_gauge")

    def __init__(self, observer: MetricsObserver, request: ObservedRequest, gauge: Any) -> None:
        self._observer, self._request, self._gauge = observer, request, gauge

    def request_finished(self, outcome: ObservedOutcome) -> None:
        self._gauge.dec()
        self._observer.finished(self._request, outcome)


class OpenSessions(Collector):
    """`hexmcp_sessions_open{hexmcp_transport}`, counted when scraped: no cost per request or session.
    A per-request core session (REST, a sessionless POST) is not a session an operator means: skipped."""

    def __init__(self, server: McpServer) -> None:
        self._server = server

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("hexmcp_sessions_open", "MCP sessions open (HTTP sessions, WebSocket "
                                   "connections, the stdio session)", labels=[TRANSPORT_LABEL])
        counts: dict[str, int] = {}
        for session in _sessions(self._server):
            if not session.closed.is_set() and (session.client_info is not None
                                                or session.transport in CONNECTION_TRANSPORTS):
                transport = session.transport or ""
                counts[transport] = counts.get(transport, 0) + 1
        for transport, count in sorted(counts.items()):
            family.add_metric([transport], count)
        yield family


def _sessions(server: McpServer) -> list[Any]:
    # A scrape on the stdio metrics server's thread may race a session opening on the event loop's.
    for _ in range(3):
        try:
            return server.sessions()
        except RuntimeError:  # "set changed size during iteration"
            continue
    return []
