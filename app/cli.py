"""The `hexmcp` command: its parser, and which command runs.

`serve` and `stdio` compose every installed tool pack the settings enable (packs.py, compose.py,
serving.py); `index`, `audit`, `config check` and the client commands run on their own.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys

from hexmcp.adapters.standard_fds import fill_closed_standard_fds
from hexmcp.tools.cache_dir import default_cache_dir, untrusted_fix, untrusted_reason

from .start.phase import starting

with starting(default_cache_dir()):  # importing the core and every flag's module: the start-up block
    from hexmcp.core.pack import PackProblem
    from hexmcp.core.startup import ExitCode

    from .commands.client_args import COMMANDS as CLIENT_COMMANDS, add_client_commands, take_trailing_words
    from .commands.audit import add_audit_command, run_audit
    from .client_answers import add_client_answer_flag
    from .config.layers import add_config_support, parse_with_config
    from .guard import GuardSetupError, add_guard_arguments
    from .http_flags import add_http_flags
    from .knowledge import add_index_flags
    from .one_line_parser import OneLineErrorParser
    from .packs import installed_packs
    from .serving import VERSION
    from .session_caps import add_session_cap_flags
    from .tasks import add_task_flags
    from .telemetry import add_telemetry_arguments
    from hexmcp.tools.flag_types import positive_int

def _add_serving_flags(parser: argparse.ArgumentParser) -> None:
    """What serve and stdio share: the log level, every pack's flags under its name (mounted upstreams'
    too), the tasks extension, the audit trail and rate limits."""
    parser.add_argument("--log-level", default=os.environ.get("HEXMCP_LOG_LEVEL", "info"),
                        choices=["debug", "info", "warning", "error"])
    for pack in installed_packs():
        pack.add_flags(parser.add_argument_group(f"{pack.name} tools"))
    add_task_flags(parser)
    add_guard_arguments(parser)
    add_session_cap_flags(parser)
    add_client_answer_flag(parser)


# Commands whose parser is built alone when the command line starts with one: building every command's
# parser is a noticeable part of `hexmcp stdio`'s start. `hexmcp --help`, any other first word, a config file
# (checked against every command's settings) and a usage error get the whole parser.
BUILT_ALONE = ("stdio", "serve", "index")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, with every setting it does not give from $HEXMCP_<FLAG> or --config (config/layers.py)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    only = argv[0] if argv and argv[0] in BUILT_ALONE else None
    parser, args, extra = parse_with_config(functools.partial(build_parser, only), argv, os.environ,
                                            build_all=build_parser if only else None)
    if extra and only:
        parser = build_parser()  # the usage line of an error names every command, as without BUILT_ALONE
    return take_trailing_words(parser, args, extra)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The `hexmcp` parser: every command's, or with `only` (one of BUILT_ALONE) that command's and `config`."""
    parser = OneLineErrorParser(prog="hexmcp", description="hexmcp: an MCP server for semantic routing tools")
    parser.add_argument("--version", action="version", version=f"hexmcp {VERSION}")
    commands = parser.add_subparsers(dest="command", required=True)
    if only in (None, "stdio"):
        stdio = commands.add_parser("stdio", help="serve one client over stdin/stdout (VS Code, desktop hosts)")
        _add_serving_flags(stdio)
        stdio.add_argument("--max-message-bytes", type=positive_int, default=4 * 1024 * 1024, metavar="BYTES",
                           help="largest accepted message line (default 4 MiB)")
        stdio.add_argument("--max-batch-messages", type=positive_int, default=64, metavar="N",
                           help="messages in one JSON-RPC batch; a longer one is refused whole, -32600 (default 64)")
        add_telemetry_arguments(stdio, stdio=True)
    if only in (None, "serve"):
        serve = commands.add_parser("serve", help="serve MCP over HTTP (Streamable HTTP, REST dialect, /health)")
        _add_serving_flags(serve)
        add_http_flags(serve)
        add_telemetry_arguments(serve)
    if only in (None, "index"):
        index = commands.add_parser("index", help="build the knowledge base's passage index ahead of time (resumable)")
        add_index_flags(index)
    if only is None:
        add_client_commands(commands)
        add_audit_command(commands)
    add_config_support(commands)  # last: --config on every command above, and `hexmcp config check`
    return parser


def main(argv: list[str] | None = None) -> int:
    fill_closed_standard_fds()  # `hexmcp serve 2>&-` must serve, not die at its first log line
    cache_dir = default_cache_dir()
    if (untrusted := untrusted_reason(cache_dir)) is not None:  # before anything is read from it
        _say(argv, f"the cache directory {cache_dir} is unusable: {untrusted}; fix: {untrusted_fix(cache_dir)}")
        return ExitCode.CACHE_DIR_UNUSABLE
    with starting(cache_dir):
        wire_fd = _claim_stdout_for_stdio(argv)
        try:
            args = parse_args(argv)
        except PackProblem as problem:  # an installed pack that cannot be loaded
            _say(argv, problem.line)
            return problem.exit_code
    try:
        return _dispatch(args, argv, wire_fd)
    except (PackProblem, GuardSetupError) as error:  # found before anything is served
        line = error.line if isinstance(error, PackProblem) else str(error)
        print(f"hexmcp {args.command}: {line}", file=sys.stderr, flush=True)
        return error.exit_code if isinstance(error, PackProblem) else ExitCode.USAGE


def _claim_stdout_for_stdio(argv: list[str] | None) -> int | None:
    """For `hexmcp stdio`, the protocol's private descriptor, taken before the command line is parsed:
    parsing imports every installed pack (their flags), and what a pack or a library it imports prints
    or writes to fd 1 then must land on stderr, not in the stream the host reads. Help goes to stdout as
    usual: nobody speaks the protocol to `hexmcp stdio --help`."""
    words = sys.argv[1:] if argv is None else argv
    if not words or words[0] != "stdio" or {"-h", "--help"} & set(words):
        return None
    from hexmcp.adapters.stdio import claim_stdout

    return claim_stdout()


def _dispatch(args: argparse.Namespace, argv: list[str] | None, wire_fd: int | None) -> int:
    if args.command in CLIENT_COMMANDS:  # hexmcp as a client: no server, no model, no tools to load
        from .extras import CLIENT_MODULES, require

        require("this command", "client", CLIENT_MODULES)
        from .commands.client import run_client_command

        return run_client_command(args)
    if args.command == "config":
        from .commands.config_check import run_config_check

        return run_config_check(args, build_parser, os.environ)
    if args.command == "audit":
        return run_audit(args)
    return _run_server_command(args, argv, wire_fd)


def _run_server_command(args: argparse.Namespace, argv: list[str] | None, wire_fd: int | None) -> int:
    from hexmcp.core.log import configure_logging

    from . import serving

    if args.command == "stdio":
        with starting(default_cache_dir()):  # composing: imports and registrations, no garbage to speak of
            if wire_fd is None:  # not taken before parsing (main: the first word was not `stdio`)
                from hexmcp.adapters.stdio import claim_stdout

                wire_fd = claim_stdout()
            configure_logging(args.log_level)
            built = serving.Serving.build(args, installed_packs())
        return serving.run_stdio_serving(built, args, wire_fd=wire_fd)
    configure_logging(args.log_level)
    if args.command == "serve":  # before workers start: one refusal line, and the token they inherit
        from .serve_auth import settle_serve_auth

        settle_serve_auth(args)
    from .scale import run_workers_if_asked

    if (supervised := run_workers_if_asked(args, argv)) is not None:
        return supervised
    if args.command == "index":
        from .knowledge import run_index

        return run_index(args)
    return serving.serve_http(args, installed_packs())


def _say(argv: list[str] | None, line: str) -> None:
    words = sys.argv[1:] if argv is None else argv
    command = f" {words[0]}" if words and not words[0].startswith("-") else ""
    print(f"hexmcp{command}: {line}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
