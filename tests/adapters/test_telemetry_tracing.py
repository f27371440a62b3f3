"""Tracing on real `hexmcp serve` and `hexmcp stdio` processes, exporting to a real OTLP/HTTP receiver:
one SERVER span per request, named and attributed per the MCP conventions, its parent from
`params._meta.traceparent` or else the HTTP `traceparent` header, `error.type=tool_error` for isError
results, log lines carrying the W3C trace id; and with no OTEL_* variable, the SDK is never imported."""

from __future__ import annotations

import json
import os
import subprocess
import time
import sys
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status
from websockets.sync.client import connect

from hexmcp.wire.jsonrpc import ERROR_CODES
from hexmcp.adapters.telemetry.conventions import TOOL_ERROR
from hexmcp.adapters.telemetry.tracing import EVENT_ID
from hexmcp.core import ErrorCode, versions

from ..support.fake_gateway import fake_gateway
from ..support.telemetry import HEXMCP, OtlpReceiver, attributes, serve, traceparent

pytestmark = pytest.mark.slow

ACCEPT = {"accept": "application/json, text/event-stream"}
INITIALIZE = {"protocolVersion": versions.LATEST_HANDSHAKE_VERSION, "capabilities": {},
              "clientInfo": {"name": "tracing-test", "version": "1"}}
# listModels with no gateway configured answers isError: true (a tool error, not a protocol error).
TOOL_FAILING = "listModels"


def _env(receiver: OtlpReceiver | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    if receiver is not None:
        env.update(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY="50")
    return env


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, OtlpReceiver, Path]]:
    log = tmp_path_factory.mktemp("tracing") / "stderr.log"
    with OtlpReceiver() as receiver:
        with serve("--no-classifier", "--no-knowledge", env=_env(receiver), log=log) as base:
            yield base, receiver, log


def _post(base: str, method: str, params: dict[str, Any], headers: dict[str, str] | None = None,
          request_id: Any = 1) -> dict[str, Any]:
    answer = httpx.post(base + "/mcp", headers={**ACCEPT, **(headers or {})}, timeout=30,
                        json={"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    return answer.json()


def _only(receiver: OtlpReceiver, name: str, trace_id: str) -> Any:
    spans = [s for s in receiver.wait_for(name, 1) if s.trace_id.hex() == trace_id]
    if not spans:  # more spans of that name may come from other tests: wait for this trace's
        spans = [s for s in receiver.wait_for(name, len(receiver.wait_for(name, 0)) + 1)
                 if s.trace_id.hex() == trace_id]
    assert len(spans) == 1, [(s.name, s.trace_id.hex()) for s in receiver.spans]
    return spans[0]


def test_a_tool_call_is_a_server_span_whose_parent_comes_from_meta(traced: Any) -> None:
    base, receiver, _ = traced
    trace_id, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    meta = {"traceparent": traceparent(trace_id, parent), "tracestate": "rojo=00f067aa0ba902b7"}
    answer = _post(base, "tools/call", {"name": TOOL_FAILING, "arguments": {}, "_meta": meta}, request_id="req-7")
    assert answer["result"]["isError"] is True
    span = _only(receiver, f"tools/call {TOOL_FAILING}", trace_id)
    assert span.kind == Span.SpanKind.SPAN_KIND_SERVER and span.parent_span_id.hex() == parent
    assert span.trace_state == "rojo=00f067aa0ba902b7"
    seen = attributes(span)
    assert seen["mcp.method.name"] == "tools/call" and seen["gen_ai.tool.name"] == TOOL_FAILING
    assert seen["gen_ai.operation.name"] == "execute_tool" and seen["jsonrpc.request.id"] == "req-7"
    assert seen["mcp.session.id"] and seen["mcp.protocol.version"] == versions.LATEST_HANDSHAKE_VERSION
    assert (seen["network.transport"], seen["network.protocol.name"]) == ("tcp", "http")
    assert seen["error.type"] == TOOL_ERROR and "rpc.response.status_code" not in seen
    assert span.status.code == Status.StatusCode.STATUS_CODE_ERROR
    assert receiver.resources[0]["service.name"] == "hexmcp"


def test_without_meta_the_http_traceparent_header_is_the_parent(traced: Any) -> None:
    base, receiver, _ = traced
    trace_id, parent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    answer = _post(base, "tools/list", {}, headers={"traceparent": traceparent(trace_id, parent)})
    assert "result" in answer
    span = _only(receiver, "tools/list", trace_id)
    assert span.parent_span_id.hex() == parent
    assert "error.type" not in attributes(span) and span.status.code != Status.StatusCode.STATUS_CODE_ERROR


def test_meta_wins_over_the_header_which_becomes_a_link(traced: Any) -> None:
    base, receiver, _ = traced
    meta_trace, meta_parent = "11111111111111111111111111111111", "2222222222222222"
    http_trace, http_parent = "33333333333333333333333333333333", "4444444444444444"
    _post(base, "tools/list", {"_meta": {"traceparent": traceparent(meta_trace, meta_parent)}},
          headers={"traceparent": traceparent(http_trace, http_parent)})
    span = _only(receiver, "tools/list", meta_trace)
    assert span.parent_span_id.hex() == meta_parent
    assert [(link.trace_id.hex(), link.span_id.hex()) for link in span.links] == [(http_trace, http_parent)]


def test_a_protocol_error_carries_its_code_and_the_log_line_carries_the_w3c_trace_id(traced: Any) -> None:
    base, receiver, log = traced
    trace_id = "5555555555555555aaaaaaaaaaaaaaaa"
    answer = _post(base, "tools/call", {"name": "made_up", "arguments": {},
                                        "_meta": {"traceparent": traceparent(trace_id, "6666666666666666")}})
    event_id = answer["error"]["data"]["eventId"]
    code = str(ERROR_CODES[ErrorCode.INVALID_PARAMS])
    span = _only(receiver, "tools/call made_up", trace_id)
    seen = attributes(span)
    assert (seen["error.type"], seen["rpc.response.status_code"], seen[EVENT_ID]) == (code, code, event_id)
    lines = [json.loads(line) for line in log.read_text().splitlines() if event_id in line]
    assert lines and lines[0]["traceId"] == trace_id and lines[0]["localTraceId"].startswith("h-")


def test_websocket_requests_are_spans_too(traced: Any) -> None:
    base, receiver, _ = traced
    trace_id = "77777777777777777777777777777777"
    with connect(base.replace("http", "ws") + "/ws") as socket:
        socket.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}))
        json.loads(socket.recv(timeout=10))
        socket.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        socket.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
                                "params": {"_meta": {"traceparent": traceparent(trace_id, "8888888888888888")}}}))
        json.loads(socket.recv(timeout=10))
    seen = attributes(_only(receiver, "tools/list", trace_id))
    assert (seen["network.transport"], seen["network.protocol.name"]) == ("tcp", "websocket")


def _stdio(env: dict[str, str], *messages: dict[str, Any], script: str | None = None) -> subprocess.CompletedProcess[str]:
    lines = "".join(json.dumps({"jsonrpc": "2.0", **m}) + "\n" for m in messages)
    command = [sys.executable, "-c", script] if script else [*HEXMCP, "stdio", "--no-classifier", "--no-knowledge"]
    done = subprocess.run(command, input=lines, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_a_stdio_request_is_a_span_over_a_pipe() -> None:
    trace_id, parent = "9999999999999999cccccccccccccccc", "dddddddddddddddd"
    with OtlpReceiver() as receiver:
        done = _stdio(_env(receiver), {"id": 1, "method": "initialize", "params": INITIALIZE},
                      {"method": "notifications/initialized"},
                      {"id": 2, "method": "tools/call", "params": {"name": TOOL_FAILING, "arguments": {},
                                                                   "_meta": {"traceparent": traceparent(trace_id, parent)}}})
        # stdout holds protocol messages only, spans or not.
        assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [1, 2]
        span = _only(receiver, f"tools/call {TOOL_FAILING}", trace_id)  # flushed before the process exited
    seen = attributes(span)
    assert span.parent_span_id.hex() == parent and seen["network.transport"] == "pipe"
    assert "network.protocol.name" not in seen and seen["error.type"] == TOOL_ERROR


# Runs the stdio server in-process, then reports which telemetry modules got imported.
_MODULES_SCRIPT = """
import json, sys
from hexmcp.app.cli import main
code = main(["stdio", "--no-classifier", "--no-knowledge"])
print("MODULES " + json.dumps({name: name in sys.modules for name in ("opentelemetry.sdk.trace", "prometheus_client")}),
      file=sys.stderr)
sys.exit(code)
"""


def _modules_loaded(env: dict[str, str]) -> dict[str, bool]:
    done = _stdio(env, {"id": 1, "method": "initialize", "params": INITIALIZE}, script=_MODULES_SCRIPT)
    # Spans printed by the console exporter go to stderr: stdout holds the one answer and nothing else.
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [1]
    marker = [line for line in done.stderr.splitlines() if line.startswith("MODULES ")]
    return json.loads(marker[-1].removeprefix("MODULES "))


def test_with_no_otel_variable_the_sdk_is_never_imported() -> None:
    assert _modules_loaded(_env(None)) == {"opentelemetry.sdk.trace": False, "prometheus_client": False}
    # The same run with tracing asked for does import it: the check above can fail.
    assert _modules_loaded({**_env(None), "OTEL_TRACES_EXPORTER": "console"})["opentelemetry.sdk.trace"] is True


def test_an_otel_value_hexmcp_cannot_honour_stops_start_up_with_its_name() -> None:
    done = subprocess.run([*HEXMCP, "stdio", "--no-classifier", "--no-knowledge"], input="", capture_output=True,
                          text=True, timeout=60, env={**_env(None), "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
                                                      "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert done.returncode == 2 and "OTEL_EXPORTER_OTLP_PROTOCOL" in done.stderr and done.stdout == ""


def test_the_gateway_call_a_tool_makes_is_a_client_span_under_the_tool_span(tmp_path: Path) -> None:
    trace_id = "abababababababababababababababab"
    with OtlpReceiver() as receiver, fake_gateway() as upstream:
        env = {**_env(receiver), "GATEWAY_URL": upstream.url, "DEFAULT_MODEL": "llama-3.1-8b-instruct"}
        with serve("--no-classifier", "--no-knowledge", env=env, log=tmp_path / "stderr.log") as base:
            # listModels reads the gateway's list at most every 2 s (ADR 1111): let the start-up read age out.
            time.sleep(2.5)
            seen_before = upstream.count("models")
            answer = _post(base, "tools/call", {"name": "listModels", "arguments": {},
                                                "_meta": {"traceparent": traceparent(trace_id, "cdcdcdcdcdcdcdcd")}})
            assert answer["result"].get("isError") is not True and upstream.count("models") > seen_before
            tool = _only(receiver, "tools/call listModels", trace_id)
            children = [s for s in receiver.wait_for("GET", 1) if s.trace_id.hex() == trace_id]
    assert children and all(s.kind == Span.SpanKind.SPAN_KIND_CLIENT for s in children)
    assert {s.parent_span_id for s in children} == {tool.span_id}
