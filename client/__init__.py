"""hexmcp.client: hexmcp on the other side of the wire, an MCP client for every transport.

    async with McpClient("http://127.0.0.1:8090/mcp") as client:
        result = await client.call_tool("classify_text", {"text": "What is 5 + 3?"})

Targets: `http(s)://` (Streamable HTTP), `rest+http(s)://` (the REST dialect), `ws(s)://` (JSON-RPC over
WebSocket), `ws+chatgpt://` (the ChatGPT dialect) and `stdio:COMMAND`. `SyncClient` wraps it for
code without an event loop. Design: docs/adr/0801-mcp-client.md.
"""

from .errors import ClientError, ClientErrorCode
from .mcp_client import McpClient, RetryPolicy
from .sync import SyncClient
from .target import Target, Transport

__all__ = ["ClientError", "ClientErrorCode", "McpClient", "RetryPolicy", "SyncClient", "Target", "Transport"]
