"""hexmcp: MCP servers over stdio, Streamable HTTP, the REST dialect and WebSocket, from one pure core.

    from hexmcp import Server

    server = Server("weather")

    @server.tool()
    async def forecast(city: str) -> str:
        "Tomorrow's forecast for a city."
        return f"{city}: sunny"

    if __name__ == "__main__":
        server.run()

The names below load on first use: `import hexmcp.anything` runs this file, and the `hexmcp` command's
start must not pay for the server machinery here.
"""

from __future__ import annotations

from ._lazy import lazy_exports

_EXPORTS = {
    "Server": "hexmcp.app.server",
    "ToolContext": "hexmcp.core",
    "ToolError": "hexmcp.core",
    "ProtocolError": "hexmcp.core",
    "ErrorCode": "hexmcp.core",
    "LongRunning": "hexmcp.core",
    "models": "hexmcp.core",
    "Registrar": "hexmcp.core.registrar",
    "Pack": "hexmcp.core.pack",
    "PackProblem": "hexmcp.core.pack",
    "Setup": "hexmcp.core.pack",
    "MetricFamily": "hexmcp.core.pack",
    "Sample": "hexmcp.core.pack",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return __all__
