"""The `hexmcp` command: the composition root.

This is the one module that knows every part: it builds the core server, registers the tools, and
hands the server to an adapter. Adapters proper (stdio, http, ws) import only the core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from hexmcp.core import McpServer

VERSION = "0.1.0"
INSTRUCTIONS = (
    "hexmcp serves semantic classification for LLM routers. Call list_categories to learn the taxonomy, "
    "then classify_text to get the category, a confidence, a recommended model and whether to use reasoning."
)


def build_server(args: argparse.Namespace) -> McpServer:
    server = McpServer("hexmcp", VERSION, title="hexmcp", instructions=INSTRUCTIONS)
    if not getattr(args, "no_classifier", False):
        from hexmcp.tools.classification.mcp_tools import register_classification_tools

        register_classification_tools(server, _classification_config(args))
    return server


def _classification_config(args: argparse.Namespace) -> Any:
    from hexmcp.tools.classification import ClassificationConfig

    overrides: dict[str, Any] = {}
    if args.taxonomy:
        overrides["taxonomy_path"] = args.taxonomy
    if args.quantization:
        overrides["quantization"] = args.quantization
    return ClassificationConfig(**overrides)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--taxonomy", metavar="PATH", help="CSV (category,text) or YAML taxonomy; default: built-in")
    parser.add_argument("--quantization", choices=["int8", "fp32"], help="embedding model precision")
    parser.add_argument("--no-classifier", action="store_true", help="serve without the classification tools")
    parser.add_argument("--log-level", default=os.environ.get("HEXMCP_LOG_LEVEL", "info"),
                        choices=["debug", "info", "warning", "error"])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="hexmcp", description="hexmcp: an MCP server for semantic routing tools")
    parser.add_argument("--version", action="version", version=f"hexmcp {VERSION}")
    commands = parser.add_subparsers(dest="command", required=True)
    stdio = commands.add_parser("stdio", help="serve one client over stdin/stdout (VS Code, desktop hosts)")
    _add_common(stdio)
    stdio.add_argument("--max-message-bytes", type=int, default=4 * 1024 * 1024,
                       help="largest accepted message line (default 4 MiB)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from hexmcp.core.log import configure_logging

    if args.command == "stdio":
        from .stdio import claim_stdout, serve_stdio

        wire_fd = claim_stdout()  # before anything else can print
        configure_logging(args.log_level)
        server = build_server(args)
        return asyncio.run(serve_stdio(server, max_message_bytes=args.max_message_bytes, wire_fd=wire_fd))
    return 2


if __name__ == "__main__":
    sys.exit(main())
