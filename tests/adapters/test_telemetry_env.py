"""Which OTEL_* environments turn tracing on (tracing_env.py), and the conventions' value mapping."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.wire.jsonrpc import ERROR_CODES
from hexmcp.adapters.telemetry import conventions as semconv
from hexmcp.adapters.telemetry.tracing_env import EXPORTERS, PROTOCOLS, TracingConfigError, tracing_settings
from hexmcp.core import ErrorCode
from hexmcp.core.observation import ObservedRequest, observed_outcome
from hexmcp.core.routing import Ok

VARIABLES = ["OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
             "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_SERVICE_NAME"]
VALUES = st.sampled_from(["", "true", "false", "none", "otlp", "console", "otlp,console", "zipkin", "grpc",
                          "http/protobuf", "http://127.0.0.1:4318"])


@pytest.mark.parametrize(("environ", "exporters"), [
    ({}, None),
    ({"OTEL_SERVICE_NAME": "router"}, None),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, ("otlp",)),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, ("otlp",)),
    ({"OTEL_TRACES_EXPORTER": "console"}, ("console",)),
    ({"OTEL_TRACES_EXPORTER": "otlp, console"}, ("otlp", "console")),
    ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, None),
    ({"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp"}, None),
])
def test_the_environment_decides(environ: dict[str, str], exporters: tuple[str, ...] | None) -> None:
    settings = tracing_settings(environ)
    assert (settings.exporters if settings else None) == exporters


@pytest.mark.parametrize(("environ", "named"), [
    ({"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER"),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
     "OTEL_EXPORTER_OTLP_PROTOCOL"),
])
def test_what_hexmcp_cannot_honour_is_refused_by_name(environ: dict[str, str], named: str) -> None:
    with pytest.raises(TracingConfigError, match=named):
        tracing_settings(environ)


@given(st.dictionaries(st.sampled_from(VARIABLES), VALUES))
def test_tracing_is_off_unless_asked_and_only_ever_uses_what_it_supports(environ: dict[str, str]) -> None:
    try:
        settings = tracing_settings(environ)
    except TracingConfigError:
        return
    if settings is None:
        return
    assert environ.get("OTEL_SDK_DISABLED", "").lower() != "true"
    assert environ.get("OTEL_TRACES_EXPORTER") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") \
        or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    assert settings.exporters and set(settings.exporters) <= set(EXPORTERS)
    if "otlp" in settings.exporters:
        assert environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", PROTOCOLS[0]) in (*PROTOCOLS, "")


def _request(method: str, target: str | None) -> ObservedRequest:
    return ObservedRequest(method=method, target=target, arguments=None, meta={}, request_key=1, session_id="s",
                           client_id="c", trace_id="t-1", protocol_version="2025-11-25", transport="stdio")


def test_span_names_carry_tools_and_prompts_but_never_uris() -> None:
    assert semconv.span_name(_request("tools/call", "classify_text")) == "tools/call classify_text"
    assert semconv.span_name(_request("prompts/get", "route")) == "prompts/get route"
    assert semconv.span_name(_request("resources/read", "hexmcp://docs/a.md")) == "resources/read"
    assert semconv.span_name(_request("tools/list", None)) == "tools/list"


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_error_code_has_an_error_type_and_tool_errors_are_tool_error(code: ErrorCode) -> None:
    from hexmcp.core import Rejection

    outcome = observed_outcome(Rejection(code=code, message="m", event_id="ev-1"), 0.1)
    assert semconv.error_type(outcome) == semconv.status_code(outcome) == str(ERROR_CODES[code])
    tool_error = observed_outcome(Ok({"content": [], "isError": True}), 0.1)
    assert (semconv.error_type(tool_error), semconv.status_code(tool_error)) == (semconv.TOOL_ERROR, "")
    assert semconv.error_type(observed_outcome(Ok({"content": []}), 0.1)) == ""
