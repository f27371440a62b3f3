"""The stdio ceiling: a blocking stdin loop that parses each line with orjson and answers, no validation.

Not an MCP server (no lifecycle, no schemas, no error handling): only what any stdio server must do per
call — parse the request, build the text block and the envelope, encode, write. `tools/call` answers
the `list_categories` payload (text + structuredContent), `initialize` a minimal result, notifications
nothing. The text block is encoded on every call, as a real server must.
"""

from __future__ import annotations

import sys

import orjson

from bench.servers.payload import list_categories_answer

ANSWER = list_categories_answer()
INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
              "serverInfo": {"name": "orjson-loop", "version": "0"}}


def main() -> int:
    read, write, flush = sys.stdin.buffer.readline, sys.stdout.buffer.write, sys.stdout.buffer.flush
    while line := read():
        request = orjson.loads(line)
        if "id" not in request:
            continue
        if request.get("method") == "initialize":
            result = INITIALIZE
        else:
            result = {"content": [{"type": "text", "text": orjson.dumps(ANSWER).decode()}],
                      "structuredContent": ANSWER, "isError": False}
        write(orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + b"\n")
        flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
