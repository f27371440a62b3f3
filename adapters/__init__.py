"""hexmcp.adapters."""
