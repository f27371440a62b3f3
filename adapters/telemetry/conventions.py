"""The OpenTelemetry MCP semantic conventions, as hexmcp's observed requests map onto them.

One place for the attribute names and for how a transport, an outcome and an error code become
attribute values, so the Prometheus labels and the span attributes can never disagree.
(The conventions: semantic-conventions docs/gen-ai/mcp.md.)
"""

from __future__ import annotations

from hexmcp.core.observation import OUTCOME_CANCELLED, OUTCOME_ERROR, OUTCOME_TOOL_ERROR, ObservedOutcome, ObservedRequest
from hexmcp.wire.jsonrpc import code_for

MCP_METHOD_NAME = "mcp.method.name"
MCP_SESSION_ID = "mcp.session.id"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
MCP_RESOURCE_URI = "mcp.resource.uri"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_PROMPT_NAME = "gen_ai.prompt.name"
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code"
ERROR_TYPE = "error.type"
NETWORK_TRANSPORT = "network.transport"
NETWORK_PROTOCOL_NAME = "network.protocol.name"

TOOL_ERROR = "tool_error"
"""error.type of a tools/call answered with isError: true (the conventions' own value)."""

DURATION_BUCKETS_S = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
"""The ExplicitBucketBoundaries the conventions give mcp.server.operation.duration and session.duration."""

# hexmcp's transport names (what adapters pass to open_session) -> (network.transport, network.protocol.name).
# The conventions say `pipe` for stdio and `tcp` for HTTP; WebSocket is a protocol over tcp.
_NETWORK = {"stdio": ("pipe", ""), "http": ("tcp", "http"), "rest": ("tcp", "http"), "ws": ("tcp", "websocket")}

# Which request member names the target, by method: tools and prompts go in span names, URIs do not
# (the conventions keep span names low-cardinality).
_TARGET_ATTRIBUTE = {"tools/call": GEN_AI_TOOL_NAME, "prompts/get": GEN_AI_PROMPT_NAME,
                     "resources/read": MCP_RESOURCE_URI, "resources/subscribe": MCP_RESOURCE_URI,
                     "resources/unsubscribe": MCP_RESOURCE_URI}


def network(transport: str | None) -> tuple[str, str]:
    """(network.transport, network.protocol.name) of an adapter's transport name ("" when unknown)."""
    return _NETWORK.get(transport or "", ("", ""))


def target_attribute(method: str) -> str | None:
    return _TARGET_ATTRIBUTE.get(method)


def span_name(request: ObservedRequest) -> str:
    """`{mcp.method.name} {target}` with the tool or prompt name; the method alone otherwise."""
    if request.target is not None and _TARGET_ATTRIBUTE.get(request.method) in (GEN_AI_TOOL_NAME, GEN_AI_PROMPT_NAME):
        return f"{request.method} {request.target}"
    return request.method


def status_code(outcome: ObservedOutcome) -> str:
    """rpc.response.status_code: the JSON-RPC error code as a string, "" for a result (a tool error included)."""
    if outcome.error_code is None or outcome.outcome == OUTCOME_TOOL_ERROR:
        return ""
    return str(code_for(outcome.error_code))


def error_type(outcome: ObservedOutcome) -> str:
    """error.type: `tool_error` for an isError result, the JSON-RPC error code for an error, "" otherwise. An
    argument refusal answered as a result (2025-11-25 on) keeps "-32602": one cause, one series, whatever
    the client's version."""
    if outcome.outcome == OUTCOME_TOOL_ERROR:
        return str(code_for(outcome.error_code)) if outcome.error_code is not None else TOOL_ERROR
    if outcome.outcome in (OUTCOME_ERROR, OUTCOME_CANCELLED):
        return status_code(outcome)
    return ""
