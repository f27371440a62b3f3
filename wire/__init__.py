"""The wire both ends of hexmcp speak, sans-IO: what the server's adapters and the client share.

JSON-RPC framing, classification and encoding (`jsonrpc`), newline framing (`lines`), server-sent events
(`sse_events`), the requests one end sent waiting for their answers (`pending`), and request deadlines on
one timer (`deadlines`). Nothing here reads or writes a socket; the only hexmcp code it knows is the core's
error codes.
"""
