"""Validate what the server emits against the official MCP JSON schema of the negotiated version.

The schemas ship with the tests (`tests/data/mcp-schema/<version>/schema.json`, with their source and
license), or come from wherever HEXMCP_SCHEMA_DIR points. Each version's schema is loaded and checked once, into one `referencing`
registry; a validator per definition is compiled on first use and cached, so validating every
message of every test stays cheap.

A response cannot be checked without knowing which request it answers, so `Transcript` remembers
the method of each request id it was shown and checks replies against that method's result type.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import referencing
from referencing.jsonschema import specification_with

from hexmcp.core import versions
from hexmcp.core.meta import META_PROTOCOL_VERSION

SCHEMA_DIR_ENV = "HEXMCP_SCHEMA_DIR"
REPO_ROOT = Path(__file__).resolve().parents[2]

# The result definition for each request the server answers. The same names in every version; 2026-07-28
# also has `<name>Response` envelopes (e.g. CallToolResultResponse, which admits InputRequiredResult).
RESULT_DEFINITIONS: dict[str, str] = {
    "initialize": "InitializeResult",
    "server/discover": "DiscoverResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "logging/setLevel": "EmptyResult",
    "subscriptions/listen": "SubscriptionsListenResult",
}
INPUT_REQUIRED = "input_required"
# The tasks extension's results, checked against its own schema (`ext-tasks`), not the version's.
TASK_RESULT_DEFINITIONS: dict[str, str] = {"tasks/get": "GetTaskResult", "tasks/update": "UpdateTaskResult",
                                           "tasks/cancel": "CancelTaskResult"}
EXT_TASKS = "ext-tasks"


class SchemaViolation(AssertionError):
    """A message the server emitted does not match the official schema of its protocol version."""


def schema_dir() -> Path:
    configured = os.environ.get(SCHEMA_DIR_ENV)
    return Path(configured) if configured else REPO_ROOT / "tests" / "data" / "mcp-schema"


class VersionSchema:
    """One protocol version's schema: definitions by name, validators compiled once each."""

    def __init__(self, version: str, *, closed: bool = False) -> None:
        path = schema_dir() / version / "schema.json"
        if not path.exists():
            raise FileNotFoundError(f"no MCP schema for {version} at {path} (set {SCHEMA_DIR_ENV})")
        self.version = version
        self.document = json.loads(path.read_text())
        if closed:
            for name, definition in self.document[_definitions_key(self.document)].items():
                _close_objects(definition, open_member=name.endswith("MetaObject"))
        self.validator_class = jsonschema.validators.validator_for(self.document)
        self.validator_class.check_schema(self.document)
        self.definitions_key = _definitions_key(self.document)
        self.definitions: dict[str, Any] = self.document[self.definitions_key]
        self._uri = f"urn:mcp-schema:{version}"
        specification = specification_with(self.document["$schema"])
        resource = referencing.Resource(contents=self.document, specification=specification)
        self._registry = referencing.Registry().with_resource(self._uri, resource)
        self._validators: dict[str, Any] = {}

    def has(self, definition: str) -> bool:
        return definition in self.definitions

    def validate(self, instance: Any, definition: str) -> None:
        validator = self._validators.get(definition)
        if validator is None:
            if not self.has(definition):
                raise SchemaViolation(f"{self.version} has no definition {definition!r}")
            reference = {"$ref": f"{self._uri}#/{self.definitions_key}/{definition}"}
            validator = self.validator_class(reference, registry=self._registry)
            self._validators[definition] = validator
        self._check(validator, instance, definition)

    def validate_against(self, instance: Any, subschema: dict[str, Any], label: str) -> None:
        """A piece of a definition that has no name of its own (JSON-RPC 'error' objects before 2025-11-25)."""
        validator = self._validators.get(label)
        if validator is None:
            validator = self._validators[label] = self.validator_class(subschema, registry=self._registry)
        self._check(validator, instance, label)

    def _check(self, validator: Any, instance: Any, label: str) -> None:
        error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            raise SchemaViolation(f"[{self.version} {label}] at {where}: {error.message}\n"
                                  f"message: {json.dumps(instance)[:2000]}")


def _definitions_key(document: dict[str, Any]) -> str:
    return "$defs" if "$defs" in document else "definitions"


@functools.cache
def schema(version: str) -> VersionSchema:
    return VersionSchema(version)


# Members whose value is open by design: `_meta` (any prefixed key), and JSON Schemas a tool or server
# wrote (any keyword goes).
_OPEN_MEMBERS = frozenset({"_meta", "inputSchema", "outputSchema", "requestedSchema"})


def _close_objects(node: Any, *, open_member: bool = False) -> None:
    """Forbid, in place, members an object definition does not declare.

    The published schemas leave every object open (TypeScript's structural typing), so a field a
    version does not have — `structuredContent` in 2024-11-05, `title` before 2025-06-18 — validates
    anyway. Closed, each object takes only the members its version declares; those whose
    `additionalProperties` is spelled out (`arguments`, maps) keep it, `_meta` objects stay open (2026-07-28
    names a few of their keys, any prefixed key may join them), and so do branches of an `allOf`, which a
    closed branch would break.
    """
    if isinstance(node, list):
        for item in node:
            _close_objects(item)
        return
    if not isinstance(node, dict):
        return
    if isinstance(node.get("properties"), dict) and "additionalProperties" not in node and not open_member:
        node["additionalProperties"] = False
    for key, value in node.items():
        if key == "allOf":
            continue
        if key == "properties" and isinstance(value, dict):
            for member, subschema in value.items():
                _close_objects(subschema, open_member=member in _OPEN_MEMBERS)
            continue
        _close_objects(value)


@functools.cache
def closed_schema(version: str) -> VersionSchema:
    return VersionSchema(version, closed=True)


def validate_result_members(version: str, method: str, result: Any) -> None:
    """Every member of `result`, at every depth, is one `version` declares for that method's result."""
    definition = RESULT_DEFINITIONS.get(method)
    if definition is None:
        raise SchemaViolation(f"no result definition known for method {method!r}")
    if _stateless(version) and isinstance(result, dict) and result.get("resultType") == INPUT_REQUIRED:
        definition = "InputRequiredResult"
    closed_schema(version).validate(result, definition)


def _stateless(version: str) -> bool:
    return not versions.features(version).handshake


def validate_result(version: str, method: str, result: Any, *, request_id: str | int = 1) -> None:
    """Check one result dict (as `Ok.result`) by wrapping it in the JSON-RPC response that would carry it."""
    validate_response(version, method, {"jsonrpc": "2.0", "id": request_id, "result": result})


def validate_response(version: str, method: str, message: dict[str, Any]) -> None:
    """A success response to `method`: envelope and result, against the definitions of `version`."""
    result = message.get("result")
    task_definition = TASK_RESULT_DEFINITIONS.get(method)
    if isinstance(result, dict) and result.get("resultType") == "task":
        task_definition = "CreateTaskResult"
    if task_definition is not None:
        schema(version).validate(message, "JSONRPCResultResponse")
        schema(EXT_TASKS).validate(result, task_definition)
        return
    definition = RESULT_DEFINITIONS.get(method)
    if definition is None:
        raise SchemaViolation(f"no result definition known for method {method!r}")
    spec = schema(version)
    if _stateless(version):
        if isinstance(result, dict) and result.get("resultType") == INPUT_REQUIRED:
            definition = "InputRequiredResult"
        if spec.has(f"{RESULT_DEFINITIONS[method]}Response"):
            spec.validate(message, f"{RESULT_DEFINITIONS[method]}Response")
        else:
            spec.validate(message, "JSONRPCResultResponse")
    else:
        spec.validate(message, "JSONRPCResponse")
    spec.validate(result, definition)


def validate_error(version: str, message: dict[str, Any]) -> None:
    """An error response. A null id (parse errors, unreadable ids) is legal JSON-RPC that no MCP schema
    spells out, so for those the envelope is checked without its id and the error object on its own."""
    spec = schema(version)
    definition = "JSONRPCErrorResponse" if spec.has("JSONRPCErrorResponse") else "JSONRPCError"
    if message.get("id", "absent") is None:
        if set(message) != {"jsonrpc", "id", "error"} or message["jsonrpc"] != "2.0":
            raise SchemaViolation(f"malformed error envelope: {message}")
        error_schema = spec.definitions[definition]["properties"]["error"]
        if "$ref" in error_schema:
            spec.validate(message["error"], error_schema["$ref"].rsplit("/", 1)[-1])
        else:
            spec.validate_against(message["error"], error_schema, f"{definition}.error")
        return
    spec.validate(message, definition)


def validate_notification(version: str, message: dict[str, Any]) -> None:
    if message.get("method") == "notifications/tasks":  # the tasks extension's own notification
        schema(EXT_TASKS).validate(message, "TaskStatusNotification")
        return
    schema(version).validate(message, "ServerNotification")
    schema(version).validate(message, "JSONRPCNotification")


def validate_server_request(version: str, message: dict[str, Any]) -> None:
    spec = schema(version)
    if not spec.has("ServerRequest"):
        raise SchemaViolation(f"{version} has no server-to-client requests, yet the server sent {message}")
    spec.validate(message, "ServerRequest")
    spec.validate(message, "JSONRPCRequest")


class Transcript:
    """Follows one conversation: knows each request's method and checks every server message.

    `version` starts as the latest handshake version (what a server falls back to before any
    negotiation) and follows the `initialize` answer; 2026-07-28 requests are checked against 2026.
    """

    def __init__(self, version: str = versions.LATEST_HANDSHAKE_VERSION) -> None:
        self.version = version
        self._methods: dict[Any, tuple[str, str]] = {}
        self.checked = 0

    def sent(self, message: Any) -> None:
        """Note a client message so its answer can be checked; batches are noted item by item."""
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict) and "method" in item and _valid_id(item.get("id")):
                self._methods[_key(item["id"])] = (item["method"], self._version_of(item))

    def received(self, message: Any) -> None:
        """Check one message (or batch) the server wrote; raise SchemaViolation if it is not valid."""
        if isinstance(message, list):
            if not message or not versions.features(self.version).batching:
                raise SchemaViolation(f"batch response not allowed in {self.version}: {message}")
            for item in message:
                self.received(item)
            return
        if not isinstance(message, dict):
            raise SchemaViolation(f"not a JSON object: {message!r}")
        self.checked += 1
        if "method" in message:
            if "id" in message:
                validate_server_request(self.version, message)
            else:
                validate_notification(self.version, message)
            return
        method, version = self._methods.get(_key(message.get("id")), (None, self.version))
        if "error" in message:
            validate_error(version, message)
            return
        if method is None:
            raise SchemaViolation(f"a result for an id the client never sent: {message}")
        validate_response(version, method, message)
        if method == "initialize":
            self.version = message["result"]["protocolVersion"]

    def _version_of(self, request: dict[str, Any]) -> str:
        params = request.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        requested = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        return requested if requested in versions.STATELESS_VERSIONS else self.version


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _key(request_id: Any) -> Any:
    # JSON-RPC ids 1 and "1" are different requests; bool ids never get here as valid keys.
    return (type(request_id).__name__, request_id)


def validate_notification_members(version: str, message: dict[str, Any]) -> None:
    """Every member of a server notification is one `version` declares for that notification."""
    spec = closed_schema(version)
    for choice in spec.definitions["ServerNotification"]["anyOf"]:
        name = choice["$ref"].rsplit("/", 1)[-1]
        declared = spec.definitions[name]["properties"]
        if declared["method"].get("const") == message.get("method"):
            # Before 2025-11-25 the notification definitions leave the JSON-RPC envelope out.
            body = message if "jsonrpc" in declared else {k: v for k, v in message.items() if k != "jsonrpc"}
            spec.validate(body, name)
            return
    raise SchemaViolation(f"{version} has no server notification {message.get('method')!r}: {message}")
