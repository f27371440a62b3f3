"""JSON-RPC 2.0 framing shared by the server's stdio, HTTP and WebSocket adapters and by the client (sans-IO).

`classify()` turns one decoded JSON value into a `Request`, `Notification`, `Response` (to a request this
end sent) or `Invalid`; `encode_*` build the dicts to send. `ERROR_CODES` is the one table from the core's
semantic codes to JSON-RPC codes (a tool pack's own codes carry theirs: `code_for`). The WebSocket ChatGPT dialect omits the `jsonrpc` member, so
checking it is optional. `decode`/`dumps` are the one JSON codec every adapter uses: orjson (`dumps` is
core/json_encoder.py's, which says why).
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import orjson

from hexmcp.core import ErrorCode, PeerRequestFailed, Rejection, SemanticCode, json_encoder
from hexmcp.core.json_types import json_type

from . import json_numbers

JSONRPC_VERSION = "2.0"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

ERROR_CODES: dict[ErrorCode, int] = {
    ErrorCode.PARSE_ERROR: PARSE_ERROR,
    ErrorCode.INVALID_REQUEST: INVALID_REQUEST,
    ErrorCode.METHOD_NOT_FOUND: METHOD_NOT_FOUND,
    ErrorCode.INVALID_PARAMS: INVALID_PARAMS,
    ErrorCode.INTERNAL_ERROR: INTERNAL_ERROR,
    ErrorCode.TOOL_EXECUTION_FAILED: INTERNAL_ERROR,  # normally an isError result, never an error response
    ErrorCode.RESOURCE_NOT_FOUND: INVALID_PARAMS,  # SEP-2164: an unknown URI is an invalid param (data.uri names it)
    ErrorCode.HEADER_MISMATCH: -32020,  # MCP 2026-07-28 HeaderMismatchError
    ErrorCode.MISSING_CLIENT_CAPABILITY: -32021,  # MCP 2026-07-28 MissingRequiredClientCapabilityError
    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION: -32022,  # MCP 2026-07-28 UnsupportedProtocolVersionError
    ErrorCode.REQUEST_TIMEOUT: -32001,  # the code the official SDKs use for timeouts
    ErrorCode.SERVER_BUSY: -32005,
    ErrorCode.RATE_LIMITED: -32002,  # the code the LLM gateway's design gives "rate limited" too
    ErrorCode.PAYLOAD_TOO_LARGE: INVALID_REQUEST,
    ErrorCode.UNAUTHORIZED: -32010,
    ErrorCode.FORBIDDEN: -32011,
    ErrorCode.SESSION_NOT_FOUND: -32012,
    ErrorCode.REQUEST_CANCELLED: -32800,  # never sent on the wire: cancelled requests get no response
}

RequestId = str | int


@attrs.define  # built for every request: define's __init__ is half the cost of frozen's; never changed
class Request:
    id: RequestId
    method: str
    params: Any


@attrs.frozen
class Notification:
    method: str
    params: Any


@attrs.frozen
class Response:
    """A client's answer to a request the server sent."""

    id: RequestId
    result: Any = None
    error: Any = None


@attrs.frozen
class Invalid:
    """Not a valid message; `id` is the request's id when one could be read, else None."""

    id: RequestId | None
    code: int
    message: str


Message = Request | Notification | Response | Invalid


def valid_id(value: Any) -> bool:
    # MCP ids are strings or integers; JSON-RPC's null id and booleans are not ids.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class NumberOutOfRange(ValueError):
    """Valid JSON holding a number orjson cannot hold: not a parse error, but the refusal of an id (-32600,
    id null) or of a param (-32602, with the request's id), as `decode_refusal` answers it."""

    def __init__(self, request_id: RequestId | None, code: ErrorCode, message: str, path: str, problem: str) -> None:
        super().__init__(message)
        self.request_id = request_id
        self.code = code
        self.message = message
        self.path = path  # where the number is, as `$.params.arguments.n`
        self.problem = problem  # what is wrong with it: `integer out of range (5000 digits; ...)`


def decode(raw: bytes | str) -> Any:
    """JSON text to a value; raises ValueError (also for invalid UTF-8) so callers answer -32700, or its
    subclass NumberOutOfRange for valid JSON with a number orjson cannot hold (see `decode_refusal`)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        encoding_problem = _encoding_problem(raw)  # only on failure: valid input pays nothing for it
        if encoding_problem is not None:
            raise ValueError(encoding_problem) from None
        if json_numbers.OVERFLOW_MESSAGE in str(error):
            refusal = _out_of_range(raw)
            if refusal is not None:
                raise refusal from None
        raise


def decode_refusal(error: ValueError) -> tuple[RequestId | None, ErrorCode, str, dict[str, Any] | None]:
    """What to answer a message `decode` refused: (id, code, message, data). A parse error (-32700, id
    null), or for a number out of range the id or param refusal that names where it is."""
    if isinstance(error, NumberOutOfRange):
        return error.request_id, error.code, error.message, {"path": error.path}
    return None, ErrorCode.PARSE_ERROR, f"Parse error: {error}", None


def _out_of_range(raw: bytes | str) -> NumberOutOfRange | None:
    """The refusal of valid JSON holding a number past a double's range; None if it is not valid JSON."""
    found = json_numbers.find(raw)
    if found is None:
        return None
    value, number = found
    path, where = number.path, json_numbers.place(number.path)
    if isinstance(value, dict):
        request_id = value.get("id")
        if path == ("id",):
            # An id must be echoed exactly in the answer; one this server cannot hold cannot be.
            return NumberOutOfRange(None, ErrorCode.INVALID_REQUEST, f"Invalid request: {number.describe()} in "
                                    "the id: an id must be a string or an integer this server can echo", where,
                                    number.describe())
        if path[0] == "params" and "method" in value and valid_id(request_id):
            return NumberOutOfRange(request_id, ErrorCode.INVALID_PARAMS,
                                    f"Invalid params: {number.describe()} at {where}", where, number.describe())
    return NumberOutOfRange(None, ErrorCode.INVALID_REQUEST, f"Invalid request: {number.describe()} at {where}", where,
                            number.describe())


def _encoding_problem(raw: bytes | str) -> str | None:
    """Where the input is not valid UTF-8 (orjson only says "surrogates not allowed"), or None."""
    if isinstance(raw, str):
        try:
            raw.encode()
        except UnicodeEncodeError as exc:
            return f"the input is not valid Unicode: a lone surrogate at character {exc.start}"
        return None
    try:
        bytes(raw).decode()
    except UnicodeDecodeError as exc:
        return f"the input is not valid UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start} ({exc.reason})"
    return None


def classify(message: Any, *, require_jsonrpc: bool = True) -> Message:
    if not isinstance(message, dict):
        return Invalid(None, INVALID_REQUEST, f"a message must be a JSON object, not {json_type(message)}")
    raw_id = message.get("id")
    kind = type(raw_id)  # exact str and int first: what every decoded id is, without a call
    msg_id = raw_id if kind is str or kind is int or valid_id(raw_id) else None
    if "jsonrpc" in message:
        version = message["jsonrpc"]
        if version != JSONRPC_VERSION:
            return Invalid(msg_id, INVALID_REQUEST, f"'jsonrpc' must be \"2.0\", got {json.dumps(version)}")
    elif require_jsonrpc:
        return Invalid(msg_id, INVALID_REQUEST, "the 'jsonrpc' member is missing: it must be \"2.0\"")
    if "method" in message:
        method = message["method"]
        if not isinstance(method, str) or not method:
            return Invalid(msg_id, INVALID_REQUEST, "'method' must be a non-empty string")
        if "id" not in message:
            return Notification(method, message.get("params"))
        if msg_id is None:
            return Invalid(None, INVALID_REQUEST, _id_problem(raw_id))
        return Request(msg_id, method, message.get("params"))
    if ("result" in message) != ("error" in message) and msg_id is not None:
        return Response(msg_id, message.get("result"), message.get("error"))
    return Invalid(msg_id, INVALID_REQUEST, "not a request, a notification or a response: 'method' is missing")


def _id_problem(raw_id: Any) -> str:
    if type(raw_id) is float and raw_id.is_integer() and abs(raw_id) >= 2**63:
        # orjson reads an integer past 64 bits as a double: the id as sent cannot be echoed.
        return "'id' must be a string or an integer this server can echo: integer id out of range (past 64 bits)"
    return f"'id' must be a string or an integer, got {json_type(raw_id)}"


def encode_result(request_id: RequestId, result: dict[str, Any], *, with_version: bool = True) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION} if with_version else {}
    message["id"] = request_id
    message["result"] = result
    return message


def encode_error(request_id: RequestId | None, code: int, message: str, data: Any = None, *,
                 with_version: bool = True) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    envelope: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION} if with_version else {}
    envelope["id"] = request_id
    envelope["error"] = error
    return envelope


def encode_rejection(request_id: RequestId | None, rejection: Rejection, *, with_version: bool = True) -> dict[str, Any]:
    error = error_object(rejection)
    return encode_error(request_id, error["code"], error["message"], error["data"], with_version=with_version)


def code_for(code: SemanticCode) -> int:
    """The JSON-RPC code of a rejection's reason: the protocol's from the table, a tool pack's its own."""
    return ERROR_CODES[code] if isinstance(code, ErrorCode) else code.jsonrpc_code


def error_object(rejection: Rejection) -> dict[str, Any]:
    """A rejection as a JSON-RPC error object: also what a failed task carries (`McpServer.tasks.error_wire`)."""
    return {"code": code_for(rejection.code), "message": rejection.message, "data": rejection.wire_data()}


def install_task_errors(server: Any) -> None:
    """Failed tasks carry their error as this table says (the core has no JSON-RPC codes of its own)."""
    server.tasks.error_wire = error_object


def encode_notification(method: str, params: dict[str, Any], *, with_version: bool = True) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION} if with_version else {}
    message["method"] = method
    message["params"] = params
    return message


def encode_request(request_id: RequestId, method: str, params: dict[str, Any], *,
                   with_version: bool = True) -> dict[str, Any]:
    message = encode_notification(method, params, with_version=with_version)
    message["id"] = request_id
    return message


def result_of(response: Response) -> dict[str, Any]:
    """The result a client sent for a server-initiated request, or `PeerRequestFailed` saying why not."""
    if response.error is not None:
        error = response.error if isinstance(response.error, dict) else {}
        raise PeerRequestFailed(str(error.get("message", "error")), error.get("code"), error.get("data"))
    if not isinstance(response.result, dict):
        raise PeerRequestFailed("the client's result is not an object")
    return response.result


# The one encoder, the core's: compact UTF-8 JSON with non-ASCII text as is; non-string keys become strings,
# as json.dumps does; `dumps_line` adds the newline of a line-delimited wire.
dumps = json_encoder.dumps
dumps_line = json_encoder.dumps_line
