"""hexmcp.adapters.stdio: one client over stdin/stdout, newline-delimited JSON-RPC 2.0."""

from .transport import DEFAULT_MAX_MESSAGE_BYTES, claim_stdout, run_stdio, serve_stdio

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "claim_stdout", "run_stdio", "serve_stdio"]
