"""Whether the standard OTEL_* variables ask for traces, read without importing the OpenTelemetry SDK.

Tracing is on when `OTEL_TRACES_EXPORTER` names an exporter (`otlp`, `console`), or, with that variable
unset, when an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT` or `..._TRACES_ENDPOINT`).
`OTEL_SDK_DISABLED=true` and `OTEL_TRACES_EXPORTER=none` turn it off. With none of them set nothing is
registered and the SDK is never imported: an untraced server pays nothing. A value hexmcp
cannot honour (another exporter, the grpc protocol) stops start-up with the variable and the reason,
instead of a server that silently exports nothing.
"""

from __future__ import annotations

from typing import Mapping

import attrs

EXPORTERS = ("otlp", "console")
PROTOCOLS = ("http/protobuf",)


class TracingConfigError(ValueError):
    """An OTEL_* variable names something hexmcp cannot do; the message names the variable."""


@attrs.frozen(kw_only=True)
class TracingSettings:
    exporters: tuple[str, ...]
    """Where spans go: "otlp" (OTLP/HTTP protobuf, configured by the OTEL_EXPORTER_OTLP_* variables), "console" (stderr)."""


def tracing_settings(environ: Mapping[str, str]) -> TracingSettings | None:
    """The tracing the environment asks for, or None for none. Raises TracingConfigError."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    named = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if named:
        exporters = tuple(dict.fromkeys(part.strip() for part in named.split(",") if part.strip()))
        if exporters == ("none",):
            return None
        unknown = [name for name in exporters if name not in EXPORTERS]
        if unknown:
            raise TracingConfigError(f"OTEL_TRACES_EXPORTER: {', '.join(unknown)} is not supported "
                                     f"(supported: {', '.join(EXPORTERS)}, none)")
    elif environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        exporters = ("otlp",)
    else:
        return None
    if "otlp" in exporters:
        for variable in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
            protocol = environ.get(variable, "").strip()
            if protocol:
                if protocol not in PROTOCOLS:
                    raise TracingConfigError(f"{variable}: {protocol} is not supported (supported: "
                                             f"{', '.join(PROTOCOLS)})")
                break
    return TracingSettings(exporters=exporters)
