"""Metrics and tracing as observers of the core's observation port.

Nothing here is imported unless the composition root asks for it; `tracing` imports the OpenTelemetry
SDK only when the standard OTEL_* variables ask for traces.
"""
