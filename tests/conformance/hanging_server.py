"""A server that hangs, for tests/conformance/test_deadlines.py: `python -m tests.conformance.hanging_server`
reads every line on stdin and never answers one (a wedged stdio MCP server, as far as a client can tell)."""

from __future__ import annotations

import sys


def main() -> None:
    for _ in sys.stdin.buffer:  # read, so the client's writes go through; answer nothing
        pass


if __name__ == "__main__":
    main()
