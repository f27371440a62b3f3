"""tools/list and tools/call: pagination, results, tool failures versus protocol errors."""

from __future__ import annotations

import json

import pytest

from hexmcp.core import ErrorCode, McpServer, Ok, ServerOptions, ToolContext, json_encoder, models, versions
from hexmcp.core.convert import to_wire
from hexmcp.core.tools import ToolAnswer, ToolRegistry, to_call_result

from ..fixtures.demo_server import SECRET, build_demo_server
from ..support.peer import CoreClient, RecordingPeer

pytestmark = pytest.mark.anyio


async def call(client: CoreClient, name: str, **arguments: object) -> dict:
    return await client.ok("tools/call", {"name": name, "arguments": arguments})


async def test_tools_list_pages_through_every_tool(client: CoreClient, demo_server: McpServer) -> None:
    await client.initialize()
    page_size = demo_server.options.page_size
    seen: list[str] = []
    cursor = None
    while True:
        result = await client.ok("tools/list", {"cursor": cursor} if cursor else {})
        assert len(result["tools"]) <= page_size
        seen += [tool["name"] for tool in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert seen == [tool.name for tool in demo_server.tools.definitions()]


async def test_the_last_page_has_no_cursor() -> None:
    client = CoreClient(build_demo_server(ServerOptions(page_size=1000)))
    await client.initialize()
    assert "nextCursor" not in await client.ok("tools/list")


async def test_a_forged_cursor_is_invalid_params(client: CoreClient) -> None:
    await client.initialize()
    rejection = await client.rejected("tools/list", {"cursor": "not-ours"})
    assert rejection.code is ErrorCode.INVALID_PARAMS
    assert rejection.data == {"path": "$.cursor"}


async def test_a_text_result(client: CoreClient) -> None:
    await client.initialize()
    result = await call(client, "echo", text="hi")
    assert result["content"] == [{"type": "text", "text": "hi"}]
    assert not result.get("isError")


async def test_a_structured_result_also_comes_as_json_text(client: CoreClient) -> None:
    await client.initialize()
    result = await call(client, "add", a=2, b=3)
    assert result["structuredContent"] == {"sum": 5}
    assert json.loads(result["content"][0]["text"]) == {"sum": 5}


async def test_an_unexpected_exception_is_an_error_result_without_internals(client: CoreClient) -> None:
    await client.initialize()
    result = await call(client, "fail")
    assert result["isError"] is True
    text = json.dumps(result)
    assert SECRET not in text
    assert "Traceback" not in text and "RuntimeError" not in text
    assert result["_meta"]["io.hexmcp/errorCode"] == ErrorCode.TOOL_EXECUTION_FAILED.value
    assert result["_meta"]["io.hexmcp/eventId"] in result["content"][0]["text"]


async def test_a_tool_error_message_reaches_the_model(client: CoreClient) -> None:
    await client.initialize()
    result = await call(client, "refuse", reason="the moon is not made of cheese")
    assert result["isError"] is True
    assert "the moon is not made of cheese" in result["content"][0]["text"]


@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
@pytest.mark.parametrize("arguments, path", [
    ({"text": 5}, "$.arguments.text"),
    ({}, "$.arguments"),
])
async def test_invalid_arguments_are_invalid_params_with_a_path(client: CoreClient, arguments: dict,
                                                                path: str, version: str) -> None:
    """-32602 up to 2025-06-18; from 2025-11-25 an isError result carrying the same (`refused_arguments`)."""
    await client.initialize(version)
    rejection = await client.refused_arguments({"name": "echo", "arguments": arguments})
    assert rejection.code is ErrorCode.INVALID_PARAMS
    assert rejection.data["path"] == path


@pytest.mark.parametrize("arguments, expected", [
    ({"text": "x" * 20_001}, "argument text is 20001 characters long; the limit is 20000"),
    ({"text": "ok", "tags": ["t"] * 40}, "argument tags has 40 items; the limit is 32"),
    ({"text": "ok", "mode": "m" * 5_000}, "argument mode: 'mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm... (5000 characters) is not one of"),
    ({"text": "ok", "mode": "loud"}, "argument mode: 'loud' is not one of ['calm', 'plain']"),
])
async def test_an_argument_refusal_never_quotes_a_long_value_whole(arguments: dict, expected: str) -> None:
    """A 20,000-character prompt over its limit comes back as its length, not as itself (refusals go to the
    client and into the log); a short value is still quoted."""
    server = McpServer("limits", "1")
    async def say(arguments: dict, ctx: ToolContext) -> str:
        return "said"

    server.tools.add("say", say, description="Say it.", input_schema={
        "type": "object", "required": ["text"], "properties": {
            "text": {"type": "string", "maxLength": 20_000},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 32},
            "mode": {"enum": ["calm", "plain"]}}})
    client = CoreClient(server, RecordingPeer())
    await client.initialize()
    rejection = await client.refused_arguments({"name": "say", "arguments": arguments})
    assert rejection.code is ErrorCode.INVALID_PARAMS
    assert expected in rejection.message and len(rejection.message) < 200


async def test_an_unknown_tool_is_invalid_params(client: CoreClient) -> None:
    await client.initialize()
    rejection = await client.rejected("tools/call", {"name": "no_such_tool", "arguments": {}})
    assert rejection.code is ErrorCode.INVALID_PARAMS
    assert rejection.data["path"] == "$.name"


async def test_params_of_the_wrong_shape_are_invalid_params(client: CoreClient) -> None:
    await client.initialize()
    for params in ({"name": 42}, {"arguments": {}}, ["echo"], "echo"):
        assert (await client.rejected("tools/call", params)).code is ErrorCode.INVALID_PARAMS


async def test_a_result_breaking_its_output_schema_is_a_tool_error() -> None:
    server = McpServer("t", "1")

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    async def broken() -> dict:
        return {"n": "not a number"}

    client = CoreClient(server)
    await client.initialize()
    result = await client.ok("tools/call", {"name": "broken", "arguments": {}})
    assert result["isError"] is True


@pytest.mark.parametrize("value", [{"p": 1.5}, {"p": -0.1}, {"p": True}, {"p": 0.5, "tags": ["a", "b", "c"]},
                                   {"p": 0.5, "tags": [""]}])
async def test_a_result_breaking_bounds_is_caught_on_the_fast_path_too(value: dict) -> None:
    """The output schema's quick check (ADR 0005) may only say "valid" where the schema agrees."""
    server = McpServer("t", "1")
    schema = {"type": "object", "required": ["p"], "properties": {
        "p": {"type": "number", "minimum": 0, "maximum": 1},
        "tags": {"type": "array", "maxItems": 2, "items": {"type": "string", "minLength": 1}}}}

    @server.tool(output_schema=schema)
    async def bounded() -> dict:
        return value

    assert server.tools.get("bounded").output_check() is not None
    client = CoreClient(server)
    await client.initialize()
    result = await client.ok("tools/call", {"name": "bounded", "arguments": {}})
    assert result["isError"] is True


async def test_a_timed_out_tool_is_a_tool_error() -> None:
    client = CoreClient(build_demo_server(ServerOptions(tool_timeout_s=0.01)))
    await client.initialize()
    result = await call(client, "slow", seconds=5)
    assert result["isError"] is True
    assert "timed out" in result["content"][0]["text"]


async def test_extra_arguments_are_dropped_for_decorated_tools() -> None:
    """The derived schema admits extra arguments, so they must not crash the call (found by the conformance suite)."""
    from hexmcp.core import McpServer, NullPeer, Ok, versions

    server = McpServer("extra", "1")

    @server.tool()
    async def shout(text: str) -> str:
        return text.upper()

    session = server.open_session(session_id="s", peer=NullPeer(), assume_version=versions.LATEST_HANDSHAKE_VERSION)
    outcome = await session.handle_request("tools/call", {"name": "shout", "arguments": {"text": "hi", "extra": 1}},
                                           request_key=1, trace_id="t")
    assert isinstance(outcome, Ok)
    assert not outcome.result.get("isError")
    assert outcome.result["content"][0]["text"] == "HI"


async def test_only_a_tool_that_reads_its_context_is_given_one() -> None:
    """A decorated function without `ctx` is registered `takes_context=False` and its handler is handed None;
    one with `ctx` gets the call's ToolContext, and so does a handler registered by hand."""
    from hexmcp.core import NullPeer

    server = McpServer("ctx", "1")
    seen: dict[str, object] = {}

    @server.tool()
    async def plain(text: str) -> str:
        return text

    @server.tool()
    async def asks(text: str, ctx: ToolContext) -> str:
        seen["asks"] = ctx
        return text

    async def by_hand(arguments: dict, ctx: ToolContext) -> str:
        seen["by_hand"] = ctx
        return "ok"

    server.tools.add("by_hand", by_hand, description="d", input_schema={"type": "object"})
    assert not server.tools.get("plain").takes_context
    assert server.tools.get("asks").takes_context and server.tools.get("by_hand").takes_context
    session = server.open_session(session_id="s", peer=NullPeer(), assume_version=versions.LATEST_HANDSHAKE_VERSION)
    for key, name in enumerate(("plain", "asks", "by_hand")):
        outcome = await session.handle_request("tools/call", {"name": name, "arguments": {"text": "hi"}},
                                               request_key=key, trace_id="t")
        assert isinstance(outcome, Ok) and not outcome.result.get("isError"), outcome
    assert isinstance(seen["asks"], ToolContext) and isinstance(seen["by_hand"], ToolContext)
    assert seen["asks"].session_id == "s"


@pytest.mark.parametrize("version", versions.SUPPORTED_VERSIONS)
@pytest.mark.parametrize("value", ["hi", {"sum": 5, "é": [1.5, None, {"deep": True}]}, {}])
def test_a_tool_answer_is_the_wire_form_of_the_call_tool_result_it_replaces(version: str, value: object) -> None:
    """Text and structured answers skip the CallToolResult model; their wire form must not change."""
    tool = ToolRegistry().add("t", _returns, description="", input_schema={"type": "object"})
    answer = to_call_result(value, tool)
    assert isinstance(answer, ToolAnswer)
    if isinstance(value, str):
        model = models.CallToolResult(content=[models.TextContent(text=value)])
    else:
        model = models.CallToolResult(content=[models.TextContent(text=json.dumps(value, ensure_ascii=False,
                                                                                  separators=(",", ":")))],
                                      structured_content=value)
    wire, structured_json = answer.shaped(version)
    assert list(wire.items()) == list(to_wire(model, version).items())
    assert list(wire["content"][0]) == list(to_wire(model, version)["content"][0])  # key order too
    assert (structured_json is not None) == ("structuredContent" in wire)
    # Encoded once: the bytes spliced in are the text block's, and the answer reads as the value it was.
    ok = Ok(wire, structured_json)
    assert json_encoder.dumps(ok.encodable()) == json_encoder.dumps(wire)


async def _returns(arguments: dict, ctx: object) -> object:
    return arguments


@pytest.mark.parametrize("value", [{1: "non-string key"}, {"big": 2**70}, {"big": [2**70, {"k": 2**65}]}])
def test_an_embedded_value_is_written_whichever_way_the_encoder_has_to_go(value: object) -> None:
    """orjson, orjson with non-string keys, or the standard library: a value encoded once and spliced into
    a larger one reads back as the value itself."""
    encoded = json_encoder.dumps(value)
    assert json.loads(encoded) == json.loads(json.dumps(value))
    outer = {"id": 2**66, "result": json_encoder.embedded(encoded)}  # the big id sends it to the stdlib
    assert json.loads(json_encoder.dumps(outer)) == {"id": 2**66, "result": json.loads(encoded)}
    assert json_encoder.dumps_line(outer) == json_encoder.dumps(outer) + b"\n"


async def test_quick_checks_are_compiled_on_a_tools_first_call_not_at_registration() -> None:
    """Compiling them costs start-up time (ADR 1207); the first call compiles and keeps them, and a wrong
    argument on that very call is still refused."""
    from hexmcp.core.tools import NOT_COMPILED

    server = McpServer("t", "1")

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    async def count(n: int) -> dict:
        return {"n": n}

    tool = server.tools.get("count")
    assert tool.quick_check is NOT_COMPILED and tool.output_quick_check is NOT_COMPILED
    client = CoreClient(server)
    await client.initialize()
    refused = await client.refused_arguments({"name": "count", "arguments": {"n": "x"}})
    assert refused.data is not None and refused.data["path"] == "$.arguments.n"
    assert callable(tool.quick_check) and tool.output_quick_check is NOT_COMPILED  # refused before the tool ran
    result = await client.ok("tools/call", {"name": "count", "arguments": {"n": 2}})
    assert result["structuredContent"] == {"n": 2}
    assert callable(tool.quick_check) and callable(tool.output_quick_check)
    assert tool.quick_check({"n": 2}) and not tool.quick_check({"n": "2"})
