"""One OpenTelemetry SERVER span per MCP request, in the MCP semantic conventions.

`TracingObserver` is a `RequestObserver`: `request_started` runs in the task that serves the request,
so the span it opens is made current there and stays current while the tool runs (outbound aiohttp calls,
the gateway's and mounted upstreams', become its children: opentelemetry-instrumentation-aiohttp-client);
the scope's `request_finished` ends it and restores the context.

The parent is the trace context the client put in `params._meta` (`traceparent`, `tracestate`,
`baggage`: what the conventions ask clients to send); failing that, the HTTP request's W3C headers
(`adapters/http/trace_headers.py`). When both are present the `_meta` one is the parent and the HTTP one
a link, as the conventions say. While the span is current, log lines carry its W3C trace id as
`traceId`; the adapter's own per-request id moves to `localTraceId`.

Importing this module imports the SDK: the composition root imports it only when `tracing_env` says the
environment asks for traces.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

import structlog
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from hexmcp.core.observation import ObservedOutcome, ObservedRequest, ObservedSession

from ..http import trace_headers
from . import conventions as semconv
from .tracing_env import TracingSettings

log = structlog.get_logger("hexmcp.adapters.telemetry")

_PROPAGATED = ("traceparent", "tracestate", "baggage")
EVENT_ID = "hexmcp.event_id"
"""The eventId of a rejection, as the client received it: a span can be matched to the log line."""


class TracingObserver:
    def __init__(self, tracer: trace.Tracer) -> None:
        self._tracer = tracer

    def request_started(self, request: ObservedRequest) -> _SpanScope | None:
        try:
            return self._open(request)
        except Exception:  # tracing must never cost a client its answer
            log.exception("could not open a span")
            return None

    def _open(self, request: ObservedRequest) -> _SpanScope:
        from_meta = _carrier(request.meta)
        from_http = trace_headers.incoming.get()
        parent = propagate.extract(from_meta or from_http) if (from_meta or from_http) else None
        links = None
        if from_meta and from_http:
            ambient = trace.get_current_span(propagate.extract(from_http)).get_span_context()
            links = [Link(ambient)] if ambient.is_valid else None
        span = self._tracer.start_span(semconv.span_name(request), context=parent, kind=SpanKind.SERVER,
                                       attributes=request_attributes(request), links=links)
        token = otel_context.attach(trace.set_span_in_context(span, parent))
        span_context = span.get_span_context()
        if span_context.is_valid:
            structlog.contextvars.bind_contextvars(traceId=trace.format_trace_id(span_context.trace_id),
                                                   localTraceId=request.trace_id)
        return _SpanScope(span, token)

    def session_ended(self, session: ObservedSession) -> None:
        pass


class _SpanScope:
    __slots__ = ("_span", "_token")

    def __init__(self, span: Any, token: object) -> None:
        self._span, self._token = span, token

    def request_finished(self, outcome: ObservedOutcome) -> None:
        span = self._span
        try:
            error = semconv.error_type(outcome)
            if error:
                span.set_attribute(semconv.ERROR_TYPE, error)
                span.set_status(Status(StatusCode.ERROR, outcome.error_code.value if outcome.error_code else error))
            code = semconv.status_code(outcome)
            if code:
                span.set_attribute(semconv.RPC_RESPONSE_STATUS_CODE, code)
            if outcome.event_id is not None:
                span.set_attribute(EVENT_ID, outcome.event_id)
        finally:
            span.end()
            otel_context.detach(self._token)


def request_attributes(request: ObservedRequest) -> dict[str, str]:
    transport, protocol = semconv.network(request.transport)
    attributes = {semconv.MCP_METHOD_NAME: request.method, semconv.MCP_SESSION_ID: request.session_id,
                  semconv.MCP_PROTOCOL_VERSION: request.protocol_version}
    if request.request_key is not None:
        attributes[semconv.JSONRPC_REQUEST_ID] = str(request.request_key)
    if transport:
        attributes[semconv.NETWORK_TRANSPORT] = transport
    if protocol:
        attributes[semconv.NETWORK_PROTOCOL_NAME] = protocol
    target = semconv.target_attribute(request.method)
    if target is not None and request.target is not None:
        attributes[target] = request.target
    if request.method == "tools/call":
        attributes[semconv.GEN_AI_OPERATION_NAME] = "execute_tool"
    return attributes


def _carrier(meta: dict[str, Any]) -> dict[str, str] | None:
    """The W3C fields of a request's `_meta`, when it has a traceparent (values from the client: strings only)."""
    if not isinstance(meta.get("traceparent"), str):
        return None
    return {name: meta[name] for name in _PROPAGATED if isinstance(meta.get(name), str)}


def start_tracing(settings: TracingSettings, *, service_version: str) -> tuple[TracingObserver, Callable[[], None]]:
    """The observer, and the function that flushes and stops the exporters (call it before exiting).

    The provider becomes the global one, so libraries instrumented with OpenTelemetry see the same
    traces. The service is named `hexmcp` unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names it.
    """
    named = "OTEL_SERVICE_NAME" in os.environ or "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    resource = Resource.create({"service.version": service_version, **({} if named else {"service.name": "hexmcp"})})
    provider = TracerProvider(resource=resource)
    for name in settings.exporters:
        provider.add_span_processor(BatchSpanProcessor(_exporter(name)))
    trace.set_tracer_provider(provider)
    # Outbound aiohttp calls (the gateway, mounted upstreams) become CLIENT spans, children of the tool call's
    # span current around them. Sessions made from now on are traced: both make theirs on first use.
    from opentelemetry.instrumentation.aiohttp_client import AioHttpClientInstrumentor

    AioHttpClientInstrumentor().instrument(tracer_provider=provider)
    return TracingObserver(provider.get_tracer("hexmcp")), provider.shutdown


def _exporter(name: str) -> SpanExporter:
    if name == "console":
        return ConsoleSpanExporter(out=sys.stderr)  # stdout is the protocol's in stdio mode
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()  # endpoint, headers, timeout, compression: the OTEL_EXPORTER_OTLP_* variables
