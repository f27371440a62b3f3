"""Another MCP server's tools, resources and prompts served here as NAME__TOOL (`mount.Upstream`).

The one pack that is a client of another server: it alone may import `hexmcp.client`
(tests/test_architecture.py). The composition root imports `mount` only when an upstream is configured,
so a server without one never loads the client (aiohttp, websockets).
"""
