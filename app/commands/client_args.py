"""The flags of `hexmcp call|tools|resources|prompts|read|bench|record|replay` (run by `client.py`).

Kept apart from the commands so that `hexmcp serve` and `hexmcp stdio`, which parse the same command
line, never import the client (aiohttp, websockets, tenacity) on their start path.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, NoReturn

from hexmcp.core import versions

from hexmcp.tools.flag_types import positive_int, positive_seconds

COMMANDS = ("call", "tools", "resources", "prompts", "read", "bench", "record", "replay")


def add_client_commands(commands: Any) -> None:
    """The client subcommands, on the `hexmcp` parser's subparsers."""
    call = _command(commands, "call", "call a tool: TARGET TOOL [key=value ...]")
    call.add_argument("words", nargs="*", metavar="[TARGET] TOOL [key=value]",
                      help="key=value arguments; a value is JSON unless the tool's schema says string")
    call.add_argument("--args-json", metavar="JSON", help="the arguments as one JSON object (merged under key=value)")
    for name, what in (("tools", "list the tools"), ("resources", "list the resources and resource templates"),
                       ("prompts", "list the prompts")):
        _command(commands, name, what).add_argument("words", nargs="*", metavar="TARGET")
    _command(commands, "read", "read a resource: TARGET URI").add_argument("words", nargs="*", metavar="[TARGET] URI")
    bench = _command(commands, "bench", "load figure: TARGET TOOL [key=value ...] called by N callers for S seconds")
    bench.add_argument("words", nargs="*", metavar="[TARGET] TOOL [key=value]")
    bench.add_argument("--args-json", metavar="JSON")
    bench.add_argument("--concurrency", type=positive_int, default=8, metavar="N", help="callers at once (default 8)")
    bench.add_argument("--duration", type=positive_seconds, default=10.0, metavar="S", help="seconds (default 10)")
    record = _command(commands, "record", "make the calls read from stdin (JSON lines) and record them")
    record.add_argument("words", nargs="*", metavar="TARGET")
    record.add_argument("--out", required=True, metavar="FILE", help="the record file to write (JSON lines)")
    record.add_argument("--calls", metavar="FILE", help="read the calls from FILE instead of stdin")
    replay = _command(commands, "replay", "re-run a record file's calls and report every result that differs")
    replay.add_argument("file", metavar="FILE")
    replay.add_argument("words", nargs="*", metavar="TARGET")


def _command(commands: Any, name: str, what: str) -> argparse.ArgumentParser:
    parser = commands.add_parser(name, help=what, description=what)
    parser.add_argument("--rest", metavar="URL", help="target: the REST dialect at URL (POST URL/{method})")
    parser.add_argument("--stdio", metavar="COMMAND", help='target: spawn COMMAND (one string, e.g. "hexmcp stdio")')
    parser.add_argument("--json", action="store_true", help="print JSON (for scripts) instead of text")
    parser.add_argument("--auth-token", default=os.environ.get("HEXMCP_AUTH_TOKEN"), metavar="T",
                        help="send 'Authorization: Bearer T' (default: $HEXMCP_AUTH_TOKEN)")
    parser.add_argument("--timeout", type=positive_seconds, default=60.0, metavar="S",
                        help="seconds to wait for each answer (default 60)")
    parser.add_argument("--protocol-version", default=versions.LATEST_HANDSHAKE_VERSION, choices=versions.SUPPORTED_VERSIONS,
                        help=f"the version to ask for (default {versions.LATEST_HANDSHAKE_VERSION}; "
                             f"{versions.V2026_07_28} is stateless)")
    return parser


def take_trailing_words(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> argparse.Namespace:
    """argparse stops a positional list at the first flag (`call URL add --json a=1` leaves `a=1` over):
    a client command takes such words as more of its words; anything else left over is a usage error."""
    if extra and args.command in COMMANDS and not any(word.startswith("-") for word in extra):
        args.words = [*args.words, *extra]
    elif extra:
        _refuse_unknown(parser, args.command, extra)
    return args


def _refuse_unknown(parser: argparse.ArgumentParser, command: str, extra: list[str]) -> NoReturn:
    """The usage error for words no flag took, said by the command's own parser (`hexmcp serve: ...`),
    with the flag a misspelt one is closest to."""
    from hexmcp.core.suggestions import did_you_mean

    from ..config.schema import command_parsers

    own = command_parsers(parser).get(command, parser)
    flags = [flag for action in own._actions for flag in action.option_strings if flag.startswith("--")]
    first = next((word.partition("=")[0] for word in extra if word.startswith("--")), None)
    hint = did_you_mean(first, flags) if first else ""
    own.error(f"unrecognized arguments: {' '.join(extra)}{hint}")
