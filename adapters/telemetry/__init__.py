"""Metrics and tracing as observers of the core's observation port (ADR 0009, ADR 0901).

Nothing here is imported unless the composition root asks for it; `tracing` imports the OpenTelemetry
SDK only when the standard OTEL_* variables ask for traces.
"""
