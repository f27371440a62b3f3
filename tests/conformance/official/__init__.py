"""hexmcp's runner for the official MCP conformance harness: install it, run legs, read the results."""
