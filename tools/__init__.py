"""hexmcp.tools."""
