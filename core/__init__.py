"""hexmcp.core: the MCP protocol as values, with no transport.

Adapters open a `Session` per connection (`McpServer.open_session`) and feed it decoded requests and
notifications; they get back `Ok(result)` or a `Rejection` and own everything about the wire.
"""

from . import models, versions
from .context import ToolContext
from .errors import ErrorCode, ProtocolError, Rejection, ToolError
from .ids import new_event_id
from .ports import NullPeer, Peer, PeerRequestFailed, RequestKey
from .server import McpServer, ServerOptions
from .session import Ok, Outcome, Session

__all__ = [
    "ErrorCode", "McpServer", "NullPeer", "Ok", "Outcome", "Peer", "PeerRequestFailed", "ProtocolError",
    "Rejection", "RequestKey", "ServerOptions", "Session", "ToolContext", "ToolError", "models", "new_event_id",
    "versions",
]
