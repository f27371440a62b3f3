"""The fixtures the official MCP conformance harness expects, served through hexmcp's public API.

`python tests/conformance/everything_server.py --port P` serves them over the HTTP adapter at
http://127.0.0.1:P/mcp. The names, texts and behaviours are the harness's contract (see the harness's
scenario list); they are built only from `hexmcp.core` and `hexmcp.adapters.http`, like any
application would.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from hexmcp.core import ErrorCode, LongRunning, McpServer, ProtocolError, ToolContext, ToolError, models

PNG_1X1 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
WAV_EMPTY = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}

JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                          "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                   "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                   "phone": {"type": "string"}, "email": {"type": "string"}},
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def text(value: str) -> models.TextContent:
    return models.TextContent(text=value)


def elicitation(message: str, properties: dict[str, Any], required: list[str] | None = None) -> tuple[str, dict]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return "elicitation", {"message": message, "requestedSchema": schema}


def sampling(prompt: str, max_tokens: int = 100) -> tuple[str, dict]:
    return "sampling", {"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                        "maxTokens": max_tokens}


def add_tools(server: McpServer) -> None:
    tools = server.tools

    def simple(name: str, description: str, content: Any, schema: dict[str, Any] | None = None) -> None:
        async def handler(arguments: dict[str, Any], ctx: ToolContext) -> Any:
            return content

        tools.add(name, handler, description=description, input_schema=schema or NO_ARGS)

    # First in the list: the harness calls the first tool with `arguments: {}`.
    simple("test_simple_text", "Returns a simple text response", text("This is a simple text response for testing."))
    simple("test_image_content", "Returns an image", models.ImageContent(data=PNG_1X1, mime_type="image/png"))
    simple("test_audio_content", "Returns audio", models.AudioContent(data=WAV_EMPTY, mime_type="audio/wav"))
    simple("test_embedded_resource", "Returns an embedded resource", models.EmbeddedResource(
        resource=models.TextResourceContents(uri="test://embedded-resource", mime_type="text/plain",
                                             text="This is an embedded resource content.")))
    simple("test_multiple_content_types", "Returns text, an image and a resource", [
        text("Multiple content types test:"),
        models.ImageContent(data=PNG_1X1, mime_type="image/png"),
        models.EmbeddedResource(resource=models.TextResourceContents(
            uri="test://mixed-content-resource", mime_type="application/json", text='{"test":"data","value":123}')),
    ])
    simple("json_schema_2020_12_tool", "Accepts arguments described by a JSON Schema 2020-12 schema",
           text("ok"), JSON_SCHEMA_2020_12)

    async def error_handling(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        raise ToolError("This tool intentionally returns an error for testing")

    tools.add("test_error_handling", error_handling, description="Always fails", input_schema=NO_ARGS)

    async def with_logging(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        await ctx.log("info", "Tool execution started")
        await asyncio.sleep(0.05)
        await ctx.log("info", "Tool processing data")
        await asyncio.sleep(0.05)
        await ctx.log("info", "Tool execution completed")
        return text("Logging test completed")

    tools.add("test_tool_with_logging", with_logging, description="Sends log messages", input_schema=NO_ARGS)

    async def logging_tool(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        await ctx.log("info", "This message is only sent when the request asked for logs")
        return text("Logged (or not)")

    tools.add("test_logging_tool", logging_tool, description="Tries to log", input_schema=NO_ARGS)

    async def with_progress(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100)
            if step < 100:
                await asyncio.sleep(0.05)
        return text("Progress test completed")

    tools.add("test_tool_with_progress", with_progress, description="Reports progress", input_schema=NO_ARGS)

    async def with_sampling(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answer = await ctx.sample(sampling(arguments["prompt"])[1])
        content = answer.get("content", {})
        return text(f"LLM response: {content.get('text', '') if isinstance(content, dict) else content}")

    tools.add("test_sampling", with_sampling, description="Asks the client's LLM",
              input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]})

    async def with_elicitation(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answer = await ctx.elicit(elicitation(arguments["message"], {
            "username": {"type": "string", "description": "Your username"},
            "email": {"type": "string", "description": "Your email address"}}, ["username", "email"])[1])
        return text(f"User response: action={answer.get('action')}, content={json.dumps(answer.get('content'))}")

    tools.add("test_elicitation", with_elicitation, description="Asks the user",
              input_schema={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})

    async def sep1034(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answer = await ctx.elicit(elicitation("Please review and update the form fields with defaults", {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"],
                       "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": True}})[1])
        return text(f"Elicitation completed: action={answer.get('action')}, "
                    f"content={json.dumps(answer.get('content'))}")

    tools.add("test_elicitation_sep1034_defaults", sep1034, description="Elicitation with defaults",
              input_schema=NO_ARGS)

    async def sep1330(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answer = await ctx.elicit(elicitation("Please select options from the enum fields", {
            "untitledSingle": {"type": "string", "description": "Choose an option",
                               "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Choose a titled option", "oneOf": [
                {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"}]},
            "legacyEnum": {"type": "string", "description": "Choose a legacy option", "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Choose multiple options",
                              "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Choose multiple titled options", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"}]}}})[1])
        return text(f"Elicitation completed: action={answer.get('action')}, "
                    f"content={json.dumps(answer.get('content'))}")

    tools.add("test_elicitation_sep1330_enums", sep1330, description="Elicitation with enum schemas",
              input_schema=NO_ARGS)

    async def reconnection(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        await asyncio.sleep(0.1)
        return text("Reconnection test completed")

    tools.add("test_reconnection", reconnection, description="A call that outlives a dropped stream",
              input_schema=NO_ARGS)

    add_stateless_fixtures(server)
    add_task_fixtures(server)


def add_task_fixtures(server: McpServer) -> None:
    """The tasks extension's fixtures (SEP-2663): the harness's tasks-* scenarios name them."""
    tools = server.tools

    async def greet(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        return text(f"Hello, {arguments.get('name', 'World')}!")

    tools.add("greet", greet, description="Greets synchronously (never a task)",
              input_schema={"type": "object", "properties": {"name": {"type": "string"}}})

    async def slow_compute(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        seconds = arguments.get("seconds", 1)
        await asyncio.sleep(seconds)
        return text(f"computed {arguments.get('label', '')} after {seconds} s")

    tools.add("slow_compute", slow_compute, description="Sleeps `seconds`, then answers; a task when it can be",
              input_schema={"type": "object", "properties": {"seconds": {"type": "number", "minimum": 0},
                                                             "label": {"type": "string"}}},
              long_running=True)

    async def failing_job(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        await asyncio.sleep(1)
        raise ToolError("failing_job always fails (a tool error, not a protocol error)")

    tools.add("failing_job", failing_job, description="Fails as a tool after about a second; only as a task",
              input_schema=NO_ARGS, long_running=LongRunning(required=True))

    async def protocol_error_job(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        await asyncio.sleep(0.2)
        raise ProtocolError(ErrorCode.INTERNAL_ERROR, "protocol_error_job fails at the protocol level")

    tools.add("protocol_error_job", protocol_error_job, description="Ends its task as failed (a JSON-RPC error)",
              input_schema=NO_ARGS, long_running=True)

    async def confirm_delete(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answer = await ctx.elicit(elicitation(f"Delete {arguments.get('filename', '?')}?",
                                              {"confirm": {"type": "boolean"}}, ["confirm"])[1])
        confirmed = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm")
        return text(f"{'deleted' if confirmed else 'kept'} {arguments.get('filename', '?')}")

    tools.add("confirm_delete", confirm_delete, description="Asks before deleting (input_required inside a task)",
              input_schema={"type": "object", "properties": {"filename": {"type": "string"}}}, long_running=True)

    async def multi_input(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answers = await ctx.ask({"name": elicitation("Your name?", {"name": {"type": "string"}}, ["name"]),
                                 "confirm": elicitation("Proceed?", {"confirm": {"type": "boolean"}}, ["confirm"])})
        return text(f"got {len(answers)} answers")

    tools.add("multi_input", multi_input, description="Asks two questions at once inside a task",
              input_schema=NO_ARGS, long_running=True)

    async def tool_with_task(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answer = await ctx.elicit(elicitation("What is your name?", {"name": {"type": "string"}}, ["name"])[1],
                                  key="user_name")
        await ctx.begin_task()
        await asyncio.sleep(0.2)
        return text(f"Hello, {(answer.get('content') or {}).get('name', 'stranger')}! (from a task)")

    tools.add("test_tool_with_task", tool_with_task, description="Asks a question, then continues as a task",
              input_schema=NO_ARGS, long_running=LongRunning(required=True, inputs_first=True))


def add_stateless_fixtures(server: McpServer) -> None:
    """The 2026-07-28 diagnostics: multi round trips, capabilities, subscriptions."""
    tools = server.tools

    async def streaming_elicitation(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answer = await ctx.elicit(elicitation("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])[1],
                                  key="confirm")
        return text(f"confirmed: {answer.get('action')}")

    tools.add("test_streaming_elicitation", streaming_elicitation, description="Asks through an input round trip",
              input_schema=NO_ARGS)

    async def missing_capability(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answer = await ctx.sample(sampling("Say hello")[1], key="hello")
        return text(f"sampled: {answer.get('model')}")

    tools.add("test_missing_capability", missing_capability, description="Needs the sampling capability",
              input_schema=NO_ARGS)

    async def trigger_tool_change(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        server.notify_list_changed("tools")
        return text("tools/list_changed published")

    async def trigger_prompt_change(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        server.notify_list_changed("prompts")
        return text("prompts/list_changed published")

    tools.add("test_trigger_tool_change", trigger_tool_change, description="Publishes tools/list_changed",
              input_schema=NO_ARGS)
    tools.add("test_trigger_prompt_change", trigger_prompt_change, description="Publishes prompts/list_changed",
              input_schema=NO_ARGS)

    async def ask_name(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answer = await ctx.elicit(elicitation("What is your name?", {"name": {"type": "string"}}, ["name"])[1],
                                  key="user_name")
        return text(f"Hello, {(answer.get('content') or {}).get('name', 'stranger')}!")

    async def ask_capital(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answer = await ctx.sample(sampling("What is the capital of France?")[1], key="capital_question")
        return text(f"The client's model said: {(answer.get('content') or {}).get('text', '')}")

    async def ask_roots(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answer = await ctx.list_roots(key="client_roots")
        return text("Roots: " + ", ".join(root.get("uri", "?") for root in answer.get("roots", [])))

    async def ask_with_state(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answer = await ctx.elicit(elicitation("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])[1], key="confirm")
        return text(f"state-ok: confirmed={(answer.get('content') or {}).get('ok')}")

    async def ask_many(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answers = await ctx.ask({
            "user_name": elicitation("What is your name?", {"name": {"type": "string"}}, ["name"]),
            "greeting": sampling("Write a one-line greeting", 50),
            "client_roots": ("roots", {}),
        })
        return text(f"Got {len(answers)} answers: {', '.join(sorted(answers))}")

    async def ask_twice(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        first = await ctx.elicit(elicitation("Step 1: What is your name?", {"name": {"type": "string"}}, ["name"])[1],
                                 key="step1")
        second = await ctx.elicit(elicitation("Step 2: What is your favorite color?", {"color": {"type": "string"}},
                                              ["color"])[1], key="step2")
        return text(f"{(first.get('content') or {}).get('name')} likes {(second.get('content') or {}).get('color')}")

    async def ask_within_capabilities(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        questions: dict[str, tuple[str, dict]] = {}
        if ctx.supports("elicitation"):
            questions["user_name"] = elicitation("What is your name?", {"name": {"type": "string"}}, ["name"])
        if ctx.supports("sampling"):
            questions["greeting"] = sampling("Write a one-line greeting", 50)
        if ctx.supports("roots"):
            questions["client_roots"] = ("roots", {})
        if not questions:
            raise ToolError("The client declared none of elicitation, sampling or roots.")
        answers = await ctx.ask(questions)
        return text(f"Asked only what the client supports: {', '.join(sorted(answers))}")

    for name, handler, description in (
        ("test_input_required_result_elicitation", ask_name, "Asks the user's name through a round trip"),
        ("test_input_required_result_sampling", ask_capital, "Asks the client's LLM through a round trip"),
        ("test_input_required_result_list_roots", ask_roots, "Asks for the client's roots through a round trip"),
        ("test_input_required_result_request_state", ask_with_state, "A round trip carrying requestState"),
        ("test_input_required_result_multiple_inputs", ask_many, "Asks three questions in one round"),
        ("test_input_required_result_multi_round", ask_twice, "Asks two questions in two rounds"),
        ("test_input_required_result_tampered_state", ask_with_state, "Rejects a tampered requestState"),
        ("test_input_required_result_capabilities", ask_within_capabilities,
         "Asks only what the client declared it supports"),
    ):
        tools.add(name, handler, description=description, input_schema=NO_ARGS)

    async def header_echo(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        return text(f"echo: {arguments.get('text', '')}")

    tools.add("test_header_echo", header_echo, description="Echoes a value that also travels in a header",
              input_schema={"type": "object", "properties": {"text": {"type": "string", "x-mcp-header": "Text"}},
                            "required": ["text"]})


def add_resources(server: McpServer) -> None:
    resources = server.resources

    def fixed(uri: str, name: str, mime_type: str, value: Any) -> None:
        async def read() -> Any:
            return value

        resources.add(models.Resource(uri=uri, name=name, mime_type=mime_type, description=f"The {name} fixture"), read)

    fixed("test://static-text", "static-text", "text/plain", "This is the content of the static text resource.")
    fixed("test://static-binary", "static-binary", "image/png", __import__("base64").b64decode(PNG_1X1))
    fixed("test://watched-resource", "watched-resource", "text/plain", "Watched resource content")

    async def read_template(id: str) -> Any:  # noqa: A002 - the template variable is called id
        return models.TextResourceContents(uri=f"test://template/{id}/data", mime_type="application/json",
                                           text=json.dumps({"id": id, "templateTest": True,
                                                            "data": f"Data for ID: {id}"}))

    resources.add_template(models.ResourceTemplate(uri_template="test://template/{id}/data", name="template",
                                                   description="A templated resource", mime_type="application/json"),
                           read_template)


def add_prompts(server: McpServer) -> None:
    prompts = server.prompts

    @prompts.prompt("test_simple_prompt", description="A simple prompt without arguments")
    async def simple_prompt() -> Any:
        return "This is a simple prompt for testing."

    async def complete_args(argument: str, value: str, context: dict[str, str]) -> list[str]:
        candidates = {"arg1": ["paris", "park", "party"], "arg2": ["blue", "green", "red"]}.get(argument, [])
        return [c for c in candidates if c.startswith(value)] or candidates

    @prompts.prompt("test_prompt_with_arguments", description="A prompt with two required arguments",
                    completer=complete_args)
    async def with_arguments(arg1: str, arg2: str) -> Any:
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @prompts.prompt("test_prompt_with_embedded_resource", description="A prompt that embeds a resource")
    async def with_resource(resourceUri: str) -> Any:  # noqa: N803 - the harness's argument name
        return [
            models.PromptMessage(role="user", content=models.EmbeddedResource(resource=models.TextResourceContents(
                uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."))),
            models.PromptMessage(role="user", content=text("Please process the embedded resource above.")),
        ]

    @prompts.prompt("test_prompt_with_image", description="A prompt with an image")
    async def with_image() -> Any:
        return [models.PromptMessage(role="user", content=models.ImageContent(data=PNG_1X1, mime_type="image/png")),
                models.PromptMessage(role="user", content=text("Please analyze the image above."))]

    @prompts.prompt("test_input_required_result_prompt", description="A prompt that asks for context first")
    async def asks_context(ctx: ToolContext) -> Any:
        answer = await ctx.elicit(elicitation("What context should the prompt use?", {"context": {"type": "string"}},
                                              ["context"])[1], key="user_context")
        context = (answer.get("content") or {}).get("context", "none")
        return f"Use this context: {context}"


def build_server() -> McpServer:
    server = McpServer("hexmcp-conformance", "0.1.0", instructions="Fixtures for the MCP conformance harness.")
    add_tools(server)
    add_resources(server)
    add_prompts(server)
    return server


def main() -> None:
    from hexmcp.adapters.http import HttpConfig, run_http
    from hexmcp.core.log import configure_logging

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--stateless", action="store_true")
    args = parser.parse_args()
    configure_logging("warning")
    run_http(build_server(), HttpConfig(host=args.host, port=args.port, stateless=args.stateless))


if __name__ == "__main__":
    main()
