"""What each observer adds to one request, in process (no wire, no subprocess, so little noise):
`tools/call echo` through a core `Session`, with no observer, a no-op observer (the port's own cost), the metrics observer, the tracing observer
(every span recorded and handed to a batch processor whose exporter drops them), tracing sampled at
0 % (spans created unsampled), and with a `_meta.traceparent` to extract. Configurations alternate in
rounds; medians of the per-round µs per call.

    python -m bench.observer_cost [--calls 20000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from typing import Any, Callable, Sequence

from hexmcp.core import McpServer, NullPeer


def _server() -> McpServer:
    server = McpServer("bench", "1")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    return server


def _metrics(server: McpServer) -> None:
    from prometheus_client import CollectorRegistry

    from hexmcp.adapters.telemetry.metrics import MetricsObserver

    server.add_observer(MetricsObserver(server, CollectorRegistry()))


def _tracing(ratio: float | None) -> Callable[[McpServer], None]:
    def install(server: McpServer) -> None:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
        from opentelemetry.sdk.trace.sampling import TraceIdRatioBased

        from hexmcp.adapters.telemetry.tracing import TracingObserver

        class Drop(SpanExporter):
            def export(self, spans: Sequence[Any]) -> SpanExportResult:
                return SpanExportResult.SUCCESS

        provider = TracerProvider(sampler=TraceIdRatioBased(ratio)) if ratio is not None else TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(Drop()))
        server.add_observer(TracingObserver(provider.get_tracer("bench")))

    return install


class _NoOp:
    """An observer that opens no scope: the observation port's own cost (ObservedRequest, timing, outcome)."""

    def request_started(self, request: Any) -> None:
        return None

    def session_ended(self, session: Any) -> None:
        pass


CONFIGURATIONS: dict[str, tuple[Callable[[McpServer], None] | None, bool]] = {
    "none": (None, False),
    "no-op": (lambda server: server.add_observer(_NoOp()), False),
    "metrics": (_metrics, False),
    "tracing": (_tracing(None), False),
    "tracing 0%": (_tracing(0.0), False),
    "tracing+meta": (_tracing(None), True),
}
PARENT = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}


async def _per_call_us(install: Callable[[McpServer], None] | None, with_meta: bool, calls: int) -> float:
    server = _server()
    if install is not None:
        install(server)
    session = server.open_session(session_id="bench", peer=NullPeer(), assume_version="2025-11-25")
    params = {"name": "echo", "arguments": {"text": "hi"}, **({"_meta": PARENT} if with_meta else {})}
    for key in range(200):  # warm-up
        await session.handle_request("tools/call", params, request_key=key, trace_id="w")
    started = time.perf_counter()
    for key in range(calls):
        await session.handle_request("tools/call", params, request_key=key, trace_id="t")
    return (time.perf_counter() - started) / calls * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    samples: dict[str, list[float]] = {name: [] for name in CONFIGURATIONS}
    for _ in range(args.rounds):
        for name, (install, with_meta) in CONFIGURATIONS.items():
            samples[name].append(asyncio.run(_per_call_us(install, with_meta, args.calls)))
    base = statistics.median(samples["none"])
    print(f"tools/call echo through a core Session, {args.calls} calls x {args.rounds} alternated rounds")
    print(f"{'observers':<14} {'us/call':>8} {'added us':>9} {'ratio':>6}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:<14} {median:>8.1f} {median - base:>9.1f} {median / base:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
