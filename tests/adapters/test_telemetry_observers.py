"""The metrics and tracing observers driven through the core with no wire (tests/support/peer.py), for
the invariants hypothesis can search: label values stay bounded whatever tool names a client makes up,
every request is counted once and nothing stays in flight, and no `_meta` a client can send makes tracing
fail a request or adopt anything but a well-formed parent."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import format_span_id, format_trace_id
from prometheus_client import CollectorRegistry

from hexmcp.adapters.telemetry.conventions import TOOL_ERROR
from hexmcp.adapters.telemetry.metrics import OTHER, MetricsObserver
from hexmcp.adapters.telemetry.tracing import TracingObserver
from hexmcp.core import McpServer

from ..support.observed import observed_server
from ..support.peer import CoreClient

TOOLS = ("echo", "broken", "forever")
HEX = "0123456789abcdef"


_server = observed_server


def _call(name: str) -> dict[str, Any]:
    return {"name": name, "arguments": {"text": "x"} if name == "echo" else {}}


@settings(max_examples=40, deadline=None)
@given(names=st.lists(st.one_of(st.sampled_from(TOOLS[:2]), st.text(max_size=12)), max_size=12))
def test_tool_labels_stay_bounded_and_every_call_is_counted_once(names: list[str]) -> None:
    registry = CollectorRegistry()
    server = _server()
    observer = MetricsObserver(server, registry)
    server.add_observer(observer)

    async def run() -> None:
        client = CoreClient(server)
        await client.initialize()
        for name in names:
            await client.request("tools/call", _call(name))

    asyncio.run(run())
    calls = [s for m in observer.operation.collect() for s in m.samples
             if s.name.endswith("_count") and s.labels["mcp_method_name"] == "tools/call"]
    assert sum(s.value for s in calls) == len(names)
    assert {s.labels["gen_ai_tool_name"] for s in calls} <= {*TOOLS, OTHER}
    for s in calls:  # the tool that raises is a tool error; an unknown one a protocol error
        if s.labels["gen_ai_tool_name"] == "broken":
            assert s.labels["error_type"] == TOOL_ERROR
    assert registry.get_sample_value("hexmcp_requests_in_flight", {"hexmcp_transport": ""}) == 0


def _traced() -> tuple[TracingObserver, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return TracingObserver(provider.get_tracer("test")), exporter


_ANY_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=60),
                         lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                         max_leaves=6)


@settings(max_examples=60, deadline=None)
@given(meta=st.dictionaries(st.sampled_from(["traceparent", "tracestate", "baggage", "other"]), _ANY_JSON))
def test_no_meta_a_client_sends_fails_a_request_or_yields_a_bad_parent(meta: dict[str, Any]) -> None:
    observer, exporter = _traced()

    async def run() -> dict[str, Any]:
        client = CoreClient(_server(observer))
        await client.initialize()
        return await client.ok("tools/call", {**_call("echo"), "_meta": meta})

    assert asyncio.run(run())["content"][0]["text"] == "x"
    span = [s for s in exporter.get_finished_spans() if s.name == "tools/call echo"][0]
    assert span.context.is_valid
    if span.parent is not None:  # adopted only from a well-formed traceparent, and exactly its ids
        parts = meta["traceparent"].strip().split("-")
        assert (format_trace_id(span.parent.trace_id), format_span_id(span.parent.span_id)) == (parts[1], parts[2])


@given(trace_id=st.text(HEX, min_size=32, max_size=32).filter(lambda t: set(t) != {"0"}),
       span_id=st.text(HEX, min_size=16, max_size=16).filter(lambda s: set(s) != {"0"}))
@settings(max_examples=30, deadline=None)
def test_a_well_formed_traceparent_is_always_the_parent(trace_id: str, span_id: str) -> None:
    observer, exporter = _traced()

    async def run() -> None:
        client = CoreClient(_server(observer))
        await client.initialize()
        await client.ok("tools/list", {"_meta": {"traceparent": f"00-{trace_id}-{span_id}-01"}})

    asyncio.run(run())
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "tools/list"]
    assert format_trace_id(span.context.trace_id) == trace_id and format_span_id(span.parent.span_id) == span_id


@pytest.mark.anyio
async def test_the_span_is_current_while_the_tool_runs_and_not_after() -> None:
    from opentelemetry import trace

    observer, exporter = _traced()
    server = McpServer("obs", "1")
    seen: list[Any] = []

    @server.tool()
    async def look() -> str:
        seen.append(trace.get_current_span().get_span_context())
        return "ok"

    server.add_observer(observer)
    client = CoreClient(server)
    await client.initialize()
    await client.ok("tools/call", {"name": "look", "arguments": {}})
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "tools/call look"]
    assert seen[0].span_id == span.context.span_id
    assert not trace.get_current_span().get_span_context().is_valid


@pytest.mark.anyio
async def test_a_span_names_the_event_id_the_client_got_for_a_tool_error_and_a_protocol_error() -> None:
    """The tool error's span named no eventId (the observers saw None for every result): now the one in its
    `_meta`, which the log line about it names too."""
    observer, exporter = _traced()
    client = CoreClient(_server(observer))
    await client.initialize()
    failed = await client.ok("tools/call", _call("broken"))
    rejection = await client.rejected("tools/call", _call("no_such_tool"))
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert spans["tools/call broken"].attributes["hexmcp.event_id"] == failed["_meta"]["io.hexmcp/eventId"]
    assert spans["tools/call no_such_tool"].attributes["hexmcp.event_id"] == rejection.event_id
