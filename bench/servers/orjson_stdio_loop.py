"""The stdio ceiling: a blocking stdin loop that parses each line with orjson and answers, no validation.

Not an MCP server (no lifecycle, no schemas, no error handling): only what any stdio server must do per
call — parse the request, build the text block and the envelope, encode, write. `tools/call` answers
the `list_categories` payload (text + structuredContent), `initialize` a minimal result, notifications
nothing. The text block is encoded on every call, as a real server must.
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

from bench.servers.payload import list_categories_answer

ANSWER = list_categories_answer()
INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
              "serverInfo": {"name": "orjson-loop", "version": "0"}}


def answer_line(request: dict[str, Any]) -> bytes | None:
    """The answer to one request, newline included; None for a notification."""
    if "id" not in request:
        return None
    if request.get("method") == "initialize":
        result = INITIALIZE
    else:
        result = {"content": [{"type": "text", "text": orjson.dumps(ANSWER).decode()}],
                  "structuredContent": ANSWER, "isError": False}
    return orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + b"\n"


def main() -> int:
    read, write, flush = sys.stdin.buffer.readline, sys.stdout.buffer.write, sys.stdout.buffer.flush
    while line := read():
        answer = answer_line(orjson.loads(line))
        if answer is not None:
            write(answer)
            flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
