"""Generated protocol traffic: valid requests and notifications from the official schema of each version,
realistic tool arguments from each tool's `inputSchema`, and invalid traffic paired with the answer the
JSON-RPC 2.0 and MCP specifications require (`Expect`).

Valid requests come from these definitions (params only: the envelope is the driver's job), resolved by
`schema_strategy`; `_meta` is left out because its keys change meaning by version (progress tokens,
2026 routing) and the suite sends them on purpose where it means to. `initialize` is the lifecycle
test's business, so it is not among them.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import attrs
from hypothesis import strategies as st

from hexmcp.wire.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from hexmcp.core import versions

from ..support import schemas
from ..support.strategies import JSON_VALUES
from .schema_strategy import from_schema, resolve

REQUEST_DEFINITIONS = ("PingRequest", "ListToolsRequest", "CallToolRequest", "ListPromptsRequest", "GetPromptRequest",
                       "ListResourcesRequest", "ListResourceTemplatesRequest", "ReadResourceRequest",
                       "CompleteRequest", "SetLevelRequest", "SubscribeRequest", "UnsubscribeRequest",
                       "DiscoverRequest")
NOTIFICATION_DEFINITIONS = ("CancelledNotification", "ProgressNotification", "RootsListChangedNotification")
# Params whose absence the schema forbids, per method: dropping one must get -32602.
REQUIRED_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri", "completion/complete": "ref",
                   "logging/setLevel": "level"}
TOOL_NUMBER_BOUND = 0.05  # tool schemas rarely bound numbers; unbounded ones are often durations (demo `slow`)
TOOL_INTEGER_BOUND = 20


@functools.cache
def _definitions(version: str) -> dict[str, Any]:
    return schemas.schema(version).definitions


def _method_and_params(version: str, definition: str) -> tuple[str, dict[str, Any]]:
    spec = _definitions(version)[definition]
    document = schemas.schema(version).document
    method = spec["properties"]["method"]["const"]
    params = resolve(document, spec["properties"].get("params", {"type": "object"}))
    if isinstance(params.get("properties"), dict):
        params["properties"].pop("_meta", None)
        params["required"] = [r for r in params.get("required", []) if r != "_meta"]
    return method, params


@functools.cache
def request_methods(version: str) -> dict[str, dict[str, Any]]:
    """Method → resolved params schema, for every request definition this version has."""
    return dict(_method_and_params(version, d) for d in REQUEST_DEFINITIONS if d in _definitions(version))


@functools.cache
def notification_methods(version: str) -> dict[str, dict[str, Any]]:
    return dict(_method_and_params(version, d) for d in NOTIFICATION_DEFINITIONS if d in _definitions(version))


@functools.cache
def known_methods() -> frozenset[str]:
    every = set()
    for version in versions.SUPPORTED_VERSIONS:
        for name, spec in _definitions(version).items():
            method = spec.get("properties", {}).get("method", {}) if isinstance(spec, dict) else {}
            if isinstance(method, dict) and "const" in method:
                every.add(method["const"])
    return frozenset(every)


def tame(schema: Any) -> Any:
    """A tool's inputSchema with unbounded numbers bounded, so generated calls finish quickly."""
    if isinstance(schema, list):
        return [tame(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    tamed = {k: tame(v) if k != "properties" else {n: tame(s) for n, s in v.items()} for k, v in schema.items()}
    if tamed.get("type") == "number":
        tamed.setdefault("minimum", 0)
        tamed["maximum"] = min(tamed.get("maximum", TOOL_NUMBER_BOUND), TOOL_NUMBER_BOUND)
    if tamed.get("type") == "integer":
        tamed.setdefault("minimum", -TOOL_INTEGER_BOUND)
        tamed["maximum"] = min(tamed.get("maximum", TOOL_INTEGER_BOUND), TOOL_INTEGER_BOUND)
    return tamed


def tool_calls(tools: list[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """tools/call params with a real tool name and arguments drawn from that tool's inputSchema."""
    if not tools:
        return st.nothing()
    return st.one_of([from_schema(tame(tool.get("inputSchema") or {"type": "object"})).map(
        lambda args, name=tool["name"]: {"name": name, "arguments": args}) for tool in tools])


def requests(version: str, tools: list[dict[str, Any]] = ()) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """(method, params) for a valid request of `version`; tools/call is realistic three times out of four."""
    options = [st.tuples(st.just(method), from_schema(params)) for method, params in request_methods(version).items()]
    if tools and "tools/call" in request_methods(version):
        options += [st.tuples(st.just("tools/call"), tool_calls(list(tools)))] * 3
    return st.one_of(options)


def notifications(version: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """(method, params) for a client notification. A cancellation names an id the suite never uses: cancelling
    one of our own requests would rightly suppress its answer, which is the lifecycle test's subject."""
    def unused_request(pair: tuple[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
        method, params = pair
        if "requestId" in params:
            params = {**params, "requestId": "never-sent"}
        return method, params

    return st.one_of([st.tuples(st.just(method), from_schema(params)).map(unused_request)
                      for method, params in notification_methods(version).items()])


# --- invalid traffic -----------------------------------------------------------------------------


@attrs.frozen
class Expect:
    """What the server must answer: an error with one of `codes` (None: any answer at all) for `request_id`, or nothing.

    `ids` are the acceptable ids of the answer: JSON-RPC says an error about an unreadable id carries null,
    and lets an error about a readable one carry either.
    """

    answer: bool
    codes: tuple[int, ...] | None = None
    ids: tuple[Any, ...] = (None,)


NOTHING = Expect(answer=False)


@attrs.frozen
class Case:
    kind: str
    payload: Any  # a JSON value, or bytes for raw cases
    expect: Expect

    @property
    def raw(self) -> bool:
        return isinstance(self.payload, bytes)


def oracle(value: Any, *, requires_jsonrpc: bool = True, batching: bool = False) -> Expect:
    """The answer JSON-RPC 2.0 + MCP require for one decoded message sent on a session (an independent
    reading of the spec, not hexmcp's classifier)."""
    if isinstance(value, list):
        return NOTHING if batching else Expect(True, (INVALID_REQUEST,))
    if not isinstance(value, dict):
        return Expect(True, (INVALID_REQUEST,))
    raw_id = value.get("id")
    readable = isinstance(raw_id, str) or (isinstance(raw_id, int) and not isinstance(raw_id, bool))
    ids = (None, raw_id) if readable else (None,)
    version = value.get("jsonrpc", None if requires_jsonrpc else "2.0")
    if version != "2.0":
        return Expect(True, (INVALID_REQUEST,), ids)
    if "method" in value:
        if not isinstance(value["method"], str) or not value["method"]:
            return Expect(True, (INVALID_REQUEST,), ids)
        if "id" not in value:
            return NOTHING
        if not readable:
            return Expect(True, (INVALID_REQUEST,))
        if value["method"] not in known_methods():
            return Expect(True, (METHOD_NOT_FOUND,), (raw_id,))
        return Expect(True, None, (raw_id,))
    if readable and (("result" in value) != ("error" in value)):
        return NOTHING  # a response to a request the server never sent: dropped
    return Expect(True, (INVALID_REQUEST,), ids)


def _request(request_id: Any, method: str = "ping", params: Any = None, **extra: Any) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    message.update(extra)
    return message


IDS = st.integers(0, 2**31) | st.text(min_size=1, max_size=12)
BAD_IDS = st.booleans() | st.none() | st.floats(allow_nan=False, allow_infinity=False).filter(
    lambda f: f != int(f) if abs(f) < 2**53 else False) | st.lists(st.integers(), max_size=2) | st.dictionaries(
    st.text(max_size=3), st.integers(), max_size=2)
BAD_VERSIONS = st.sampled_from(["1.0", "2", "2.0 ", "", "3.0"]) | st.just(2.0) | st.none() | st.integers(0, 3)


def deep(depth: int, shape: str) -> str:
    return ("[" * depth + "]" * depth) if shape == "array" else ('{"a":' * depth + "1" + "}" * depth)


def deep_case(depth: int, shape: str, where: str, request_id: Any) -> Case:
    """`depth` nested arrays or objects, as the whole message or inside a ping's params._meta."""
    if where == "message":
        # A nested array is a batch (not allowed after 2025-03-26), a nested object has no `method`: -32600
        # either way, or -32700 from a parser that refuses the depth.
        codes = (INVALID_REQUEST,) if depth < 1000 else (INVALID_REQUEST, PARSE_ERROR)
        return Case("deep nesting", deep(depth, shape).encode() + b"\n", Expect(True, codes))
    text = f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"method":"ping","params":{{"_meta":{{"x":{deep(depth, shape)}}}}}}}'
    return Case("deep nesting", text.encode() + b"\n", Expect(True, None, (None, request_id)))


INVALID_KINDS = ("arbitrary json", "wrong jsonrpc", "wrong id type", "missing method", "missing param", "unknown method",
                 "non-object params", "oversized string", "deep nesting", "invalid utf-8", "not json")


@st.composite
def invalid_cases(draw: st.DrawFn, *, kind: str | None = None, requires_jsonrpc: bool = True, max_depth: int = 1000,
                  binary_frames_refused: bool = False) -> Case:
    """One piece of invalid (or hostile) traffic and the answer it must get. On a WebSocket, bytes that are not
    UTF-8 can only travel as a binary frame, which a text-only server may refuse as such (-32600)."""
    request_id = draw(IDS)
    kind = kind or draw(st.sampled_from(INVALID_KINDS))
    if kind == "arbitrary json":
        value = draw(JSON_VALUES | st.dictionaries(st.sampled_from(["jsonrpc", "id", "method", "params", "result",
                                                                     "error"]), JSON_VALUES, max_size=4))
        return Case(kind, value, oracle(value, requires_jsonrpc=requires_jsonrpc))
    if kind == "wrong jsonrpc":
        message = _request(request_id)
        version = draw(BAD_VERSIONS)
        message["jsonrpc"] = version
        return Case(kind, message, Expect(True, (INVALID_REQUEST,), (None, request_id)))
    if kind == "wrong id type":
        return Case(kind, _request(draw(BAD_IDS)), Expect(True, (INVALID_REQUEST,)))
    if kind == "missing method":
        message = {"jsonrpc": "2.0", "id": request_id, **draw(st.sampled_from([{}, {"params": {}}]))}
        return Case(kind, message, Expect(True, (INVALID_REQUEST,), (None, request_id)))
    if kind == "missing param":
        method = draw(st.sampled_from(sorted(REQUIRED_PARAMS)))
        params = {"name": "echo", "uri": "demo://greeting", "level": "info", "ref": {"type": "ref/prompt", "name": "x"},
                  "argument": {"name": "a", "value": ""}, "arguments": {}}
        params.pop(REQUIRED_PARAMS[method])
        return Case(kind, _request(request_id, method, params), Expect(True, (INVALID_PARAMS,), (request_id,)))
    if kind == "unknown method":
        method = draw(st.text(min_size=1, max_size=30).filter(lambda m: m not in known_methods()))
        return Case(kind, _request(request_id, method, draw(st.none() | st.just({}))),
                    Expect(True, (METHOD_NOT_FOUND,), (request_id,)))
    if kind == "non-object params":
        method = draw(st.sampled_from(["tools/list", "tools/call", "resources/read", "prompts/get"]))
        params = draw(st.lists(st.integers(), max_size=2) | st.text(max_size=5) | st.integers() | st.booleans())
        return Case(kind, _request(request_id, method, params),
                    Expect(True, (INVALID_PARAMS, INVALID_REQUEST), (request_id,)))
    if kind == "oversized string":
        size = draw(st.sampled_from([64 * 1024, 512 * 1024, 1024 * 1024]))
        message = _request(request_id, "tools/call", {"name": "x" * size, "arguments": {}})
        return Case(kind, message, Expect(True, None, (request_id,)))
    if kind == "deep nesting":
        depth = draw(st.integers(1, 20) | st.integers(20, max_depth - 1))
        return deep_case(depth, draw(st.sampled_from(["array", "object"])), draw(st.sampled_from(["message", "params"])),
                         request_id)
    if kind == "invalid utf-8":
        good = json.dumps(_request(request_id, "tools/call", {"name": "echo", "arguments": {"text": "PLACEHOLDER"}}))
        bad = draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\xe2\x82"]))
        return Case(kind, good.encode().replace(b"PLACEHOLDER", b"a" + bad + b"z") + b"\n", 
                    Expect(True, (PARSE_ERROR, INVALID_REQUEST) if binary_frames_refused else (PARSE_ERROR,)))
    text = draw(st.sampled_from(['{"jsonrpc": "2.0", "id": 1, "method": "ping"', "{", "nope", '{"a":1}}', "[1,",
                                 "'single'", "NaN]", '{"id":1,}']))
    return Case("not json", text.encode() + b"\n", Expect(True, (PARSE_ERROR,)))
