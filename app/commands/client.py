"""`hexmcp call|tools|resources|prompts|read|bench|record|replay`: hexmcp as a client, on the command line.

TARGET is a URL (`http(s)://.../mcp`, `ws(s)://...`, `ws+chatgpt://...`, `rest+http(s)://...`,
`stdio:COMMAND`), or given by `--rest URL` or `--stdio "COMMAND ARGS"` instead of the positional
(the flags are declared in `client_args.py`).
Failures print one line on stderr and exit with the code `EXIT_CODES` gives their `ClientErrorCode`;
the table is documented in docs/client.md.
"""

from __future__ import annotations

import argparse
import asyncio
import enum
import json
import sys
from typing import Any, Awaitable, Callable

from hexmcp.client import ClientError, ClientErrorCode, McpClient, Target
from . import client_output as output


class ClientExit(enum.IntEnum):
    OK = 0
    TOOL_ERROR = 1  # the tool ran and reported an error (isError); replay: some result differs
    USAGE = 2  # a bad flag, target, argument or file
    UNREACHABLE = 6  # no connection, the server process died, the socket closed
    UNAUTHORIZED = 7  # the server refused the credentials (--auth-token / $HEXMCP_AUTH_TOKEN)
    SERVER_ERROR = 8  # the server answered with a protocol error (unknown tool, invalid arguments, ...)
    TIMEOUT = 9  # no answer within --timeout
    INTERRUPTED = 130


EXIT_CODES: dict[ClientErrorCode, ClientExit] = {
    ClientErrorCode.USAGE: ClientExit.USAGE,
    ClientErrorCode.UNREACHABLE: ClientExit.UNREACHABLE,
    ClientErrorCode.CLOSED: ClientExit.UNREACHABLE,
    ClientErrorCode.UNAUTHORIZED: ClientExit.UNAUTHORIZED,
    ClientErrorCode.SERVER_ERROR: ClientExit.SERVER_ERROR,
    ClientErrorCode.INCOMPATIBLE: ClientExit.SERVER_ERROR,
    ClientErrorCode.TIMEOUT: ClientExit.TIMEOUT,
}
def run_client_command(args: argparse.Namespace) -> int:
    """Run one client subcommand; every failure becomes one line on stderr and an exit code."""
    from hexmcp.core.log import configure_logging

    configure_logging("warning")  # stdout carries the results (JSON for scripts): logs go to stderr only
    try:
        return _run(_COMMANDS[args.command](args))
    except ClientError as error:
        print(f"hexmcp {args.command}: {error.message}", file=sys.stderr)
        return EXIT_CODES[error.code]
    except KeyboardInterrupt:
        return ClientExit.INTERRUPTED


def _run(work: Awaitable[int]) -> int:
    try:  # uvloop when installed: the client's per-call overhead is mostly the event loop's
        import uvloop

        factory: Callable[[], asyncio.AbstractEventLoop] | None = uvloop.new_event_loop
    except ImportError:
        factory = None
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(work)  # type: ignore[arg-type]


def _target(args: argparse.Namespace, words: list[str]) -> tuple[Target, list[str]]:
    """The target (from --rest, --stdio or the first word) and the words after it."""
    given = [flag for flag in ("rest", "stdio") if getattr(args, flag)]
    if len(given) > 1:
        raise ClientError(ClientErrorCode.USAGE, "give one target: --rest or --stdio, not both")
    if args.rest:
        return Target.rest(args.rest), words
    if args.stdio:
        return Target.stdio(args.stdio), words
    if not words:
        raise ClientError(ClientErrorCode.USAGE, "no target: give a URL, --rest URL or --stdio COMMAND")
    return Target.parse(words[0]), words[1:]


def _client(args: argparse.Namespace, target: Target) -> McpClient:
    return McpClient(target, auth_token=args.auth_token or None, protocol_version=args.protocol_version,
                     timeout=args.timeout)


def _exactly(words: list[str], names: str) -> list[str]:
    expected = names.split()
    if len(words) != len(expected):
        raise ClientError(ClientErrorCode.USAGE, f"expected {names} after the target, got {len(words)} word(s)")
    return words


async def _tool_and_arguments(args: argparse.Namespace, client: McpClient, words: list[str]) -> tuple[str, dict[str, Any]]:
    if not words:
        raise ClientError(ClientErrorCode.USAGE, "no tool named")
    tool, pairs = words[0], words[1:]
    arguments: dict[str, Any] = {}
    if args.args_json is not None:
        try:
            arguments = json.loads(args.args_json)
        except ValueError as error:
            raise ClientError(ClientErrorCode.USAGE, f"--args-json is not JSON: {error}") from None
        if not isinstance(arguments, dict):
            raise ClientError(ClientErrorCode.USAGE, "--args-json must be a JSON object")
    if pairs:
        properties = await _properties_of(client, tool)
        for pair in pairs:
            key, equals, value = pair.partition("=")
            if not equals or not key:
                raise ClientError(ClientErrorCode.USAGE, f"not key=value: {pair!r}")
            arguments[key] = _coerce(value, properties.get(key))
    return tool, arguments


async def _properties_of(client: McpClient, tool: str) -> dict[str, Any]:
    """The tool's inputSchema properties, so `text=5` stays the string a string parameter wants."""
    for definition in await client.all_tools():
        if definition.name == tool:
            properties = definition.input_schema.get("properties")
            return properties if isinstance(properties, dict) else {}
    return {}


def _coerce(value: str, schema: Any) -> Any:
    if isinstance(schema, dict) and schema.get("type") == "string":
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


async def _call(args: argparse.Namespace) -> int:
    target, words = _target(args, args.words)
    async with _client(args, target) as client:
        tool, arguments = await _tool_and_arguments(args, client, words)
        result = await client.call_tool(tool, arguments)
        output.call_result(result, client.protocol_version, as_json=args.json)
    return ClientExit.TOOL_ERROR if result.is_error else ClientExit.OK


async def _listing(args: argparse.Namespace) -> int:
    """`hexmcp tools|resources|prompts TARGET`: every page of the list."""
    target, words = _target(args, args.words)
    _exactly(words, "")
    async with _client(args, target) as client:
        version = client.protocol_version
        if args.command == "tools":
            output.tools(await client.all_tools(), version, as_json=args.json)
        elif args.command == "resources":
            output.resources(await client.all_resources(), await client.all_resource_templates(), version,
                             as_json=args.json)
        else:
            output.prompts(await client.all_prompts(), version, as_json=args.json)
    return ClientExit.OK


async def _read(args: argparse.Namespace) -> int:
    target, words = _target(args, args.words)
    (uri,) = _exactly(words, "URI")
    async with _client(args, target) as client:
        output.read_result(await client.read_resource(uri), client.protocol_version, as_json=args.json)
    return ClientExit.OK


async def _bench(args: argparse.Namespace) -> int:
    from hexmcp.client.load import run_load

    target, words = _target(args, args.words)
    async with _client(args, target) as client:
        tool, arguments = await _tool_and_arguments(args, client, words)
        figures = await run_load(client, tool, arguments, concurrency=args.concurrency, duration_s=args.duration)
    output.load_figures(figures, as_json=args.json)
    return ClientExit.OK


async def _record(args: argparse.Namespace) -> int:
    from hexmcp.client.recording import read_specs, record

    target, words = _target(args, args.words)
    _exactly(words, "")
    source = open(args.calls, encoding="utf-8") if args.calls else sys.stdin  # noqa: SIM115 (closed below)
    try:
        specs = list(read_specs(source, args.calls or "stdin"))  # all checked before the first call is made
        async with _client(args, target) as client:
            with open(args.out, "w", encoding="utf-8") as out:
                made = await record(client, specs, out)
    except OSError as error:
        raise ClientError(ClientErrorCode.USAGE, f"{error.filename}: {error.strerror}") from None
    finally:
        if source is not sys.stdin:
            source.close()
    output.say(f"recorded {made} call(s) to {args.out}", as_json=args.json, figures={"calls": made, "out": args.out})
    return ClientExit.OK


async def _replay(args: argparse.Namespace) -> int:
    from hexmcp.client.recording import read_record, replay

    target, words = _target(args, args.words)
    _exactly(words, "")
    try:
        with open(args.file, encoding="utf-8") as lines:
            session, calls = read_record(lines, args.file)
    except OSError as error:
        raise ClientError(ClientErrorCode.USAGE, f"{error.filename}: {error.strerror}") from None
    async with _client(args, target) as client:
        differences = await replay(client, calls)
    output.replay_report(session, len(calls), differences, as_json=args.json)
    return ClientExit.TOOL_ERROR if differences else ClientExit.OK


_COMMANDS: dict[str, Callable[[argparse.Namespace], Awaitable[int]]] = {
    "call": _call, "tools": _listing, "resources": _listing, "prompts": _listing, "read": _read, "bench": _bench,
    "record": _record, "replay": _replay,
}
