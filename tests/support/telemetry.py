"""For the metrics and tracing tests: a real `hexmcp serve` in a subprocess, a Prometheus scrape parsed
with prometheus-client's own parser, and an OTLP/HTTP receiver that decodes spans with opentelemetry-proto."""

from __future__ import annotations

import contextlib
import http.server
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from prometheus_client.parser import text_string_to_metric_families

from .net import free_port, wait_healthy

HEXMCP = [sys.executable, "-m", "hexmcp.app.cli"]


class Scrape:
    """One /metrics answer: samples by name, each with its labels."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.samples = [sample for family in text_string_to_metric_families(text) for sample in family.samples]

    def value(self, name: str, **labels: str) -> float:
        """The sum of `name` over the samples whose labels include `labels` (0 when none)."""
        return sum(s.value for s in self.samples if s.name == name and labels.items() <= s.labels.items())

    def labelled(self, name: str) -> list[dict[str, str]]:
        return [s.labels for s in self.samples if s.name == name]


def scrape(url: str, **headers: str) -> Scrape:
    answer = httpx.get(url, headers=headers, timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    return Scrape(answer.text)


@contextlib.contextmanager
def serve(*args: str, env: dict[str, str] | None = None, log: Path, ready_s: float = 120) -> Iterator[str]:
    """`hexmcp serve --port P *args`, its stderr in `log`; yields the base URL once /health says ok."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as stderr:
        process = subprocess.Popen([*HEXMCP, "serve", "--port", str(port), *args], stdout=subprocess.DEVNULL,
                                   stderr=stderr, env=env)
        try:
            wait_healthy(base, lambda: process.poll() is None, timeout_s=ready_s,
                         why_dead=lambda: log.read_text(errors="replace")[-3000:])
            yield base
        finally:
            process.terminate()
            process.wait(timeout=30)


class OtlpReceiver:
    """An OTLP/HTTP (protobuf) trace receiver on a free port: every span posted to /v1/traces, decoded."""

    def __init__(self) -> None:
        self.port = free_port()
        self.spans: list[Any] = []  # opentelemetry.proto.trace.v1.Span
        self.resources: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                if self.path == "/v1/traces":
                    request = ExportTraceServiceRequest()
                    request.ParseFromString(body)
                    receiver._take(request)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _take(self, request: ExportTraceServiceRequest) -> None:
        with self._lock:
            for resource_spans in request.resource_spans:
                self.resources.append({a.key: _value(a.value) for a in resource_spans.resource.attributes})
                for scope_spans in resource_spans.scope_spans:
                    self.spans.extend(scope_spans.spans)

    def wait_for(self, name: str, count: int = 1, timeout_s: float = 20) -> list[Any]:
        deadline = time.monotonic() + timeout_s
        while True:
            with self._lock:
                found = [span for span in self.spans if span.name == name]
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


def attributes(span: Any) -> dict[str, Any]:
    return {a.key: _value(a.value) for a in span.attributes}


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


def traceparent(trace_id: str, span_id: str) -> str:
    return f"00-{trace_id}-{span_id}-01"
