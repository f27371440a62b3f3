"""Another MCP server's tools, resources and prompts served here as NAME__TOOL (`mount.Upstream`), as the
upstreams pack (`pack.UpstreamsPack`); which servers to mount: `specs`.

The one pack that is a client of another server: it alone may import `hexmcp.client`
(tests/test_architecture.py). The pack is composed, and `mount` imported, only when an upstream is
configured, so a server without one never loads the client (aiohttp, websockets).
"""
