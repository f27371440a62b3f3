"""Argument refusals as tool results: from 2025-11-25 on (SEP-1303), a `tools/call` whose arguments fail the
tool's input schema, or the tool's own checks of them, is a tool execution error: a result with `isError` whose
text the model reads and corrects, not a JSON-RPC -32602. Older versions keep -32602 (their spec lists
"Invalid arguments" among protocol errors); an unknown tool or a malformed request stays -32602 everywhere.

Shared by the direct call (`handlers`) and a task's work (`tasks.calls`), so both answer the same form.
"""

from __future__ import annotations

import structlog

from . import models, versions
from .echo import clip_data, clip_text
from .errors import ErrorCode, ProtocolError
from .ids import new_event_id
from .meta import META_ERROR_CODE, META_ERROR_DATA, META_EVENT_ID

log = structlog.get_logger("hexmcp.core")

ARGUMENTS_PATH = "$.arguments"


def answered_as_result(refused: ProtocolError, version: str, transport: str | None) -> bool:
    """Whether `refused` is an argument refusal this version answers as a result. Both refusers name a path
    under `$.arguments` (the schema check, the tools' own checks); the REST dialect keeps its HTTP 400,
    which routers act on."""
    if refused.code is not ErrorCode.INVALID_PARAMS or not versions.features(version).argument_errors_as_results:
        return False
    path = refused.data.get("path") if isinstance(refused.data, dict) else None
    return transport != "rest" and isinstance(path, str) and path.startswith(ARGUMENTS_PATH)


def refusal_result(refused: ProtocolError, tool: str) -> models.CallToolResult:
    """The isError result: the refusal's message with its eventId (as a -32602 would quote it), and in `_meta`
    the eventId, the code `invalid_params` (what metrics and the audit trail count) and the refusal's data."""
    event_id = new_event_id()
    message = clip_text(refused.message)
    log.info("tool arguments refused", tool=tool, code=ErrorCode.INVALID_PARAMS.value, reason=message,
             eventId=event_id)
    meta = {META_EVENT_ID: event_id, META_ERROR_CODE: ErrorCode.INVALID_PARAMS.value}
    if refused.data:
        meta[META_ERROR_DATA] = clip_data(refused.data)
    return models.CallToolResult(content=[models.TextContent(text=f"{message} (eventId {event_id})")],
                                 is_error=True, meta=meta)
