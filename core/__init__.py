"""hexmcp.core: the MCP protocol as values, with no transport.

Adapters open a `Session` per connection (`McpServer.open_session`) and feed it decoded requests and
notifications; they get back `Ok(result)` or a `Rejection` and own everything about the wire.
"""

from . import meta, models, versions
from .context import ToolContext
from .errors import ErrorCode, PackErrorCode, ProtocolError, Rejection, SemanticCode, ToolError
from .ids import new_event_id
from .options import ServerOptions
from .ports import NullPeer, Peer, PeerRequestFailed, RequestKey
from .routing import Call, Ok, Outcome
from .server import McpServer
from .session import Session
from .tasks.model import TASKS_EXTENSION, LongRunning, TaskLimits, TaskStatus, TaskStore

__all__ = [
    "Call", "ErrorCode", "LongRunning", "McpServer", "NullPeer", "Ok", "Outcome", "PackErrorCode", "Peer", "PeerRequestFailed",
    "ProtocolError", "Rejection", "RequestKey", "SemanticCode", "ServerOptions", "Session", "TASKS_EXTENSION", "TaskLimits", "TaskStatus", "TaskStore",
    "ToolContext", "ToolError", "meta", "models",
    "new_event_id", "versions",
]
