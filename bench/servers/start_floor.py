"""Cold-start floors: the least a Python stdio server can do before its `initialize` answer.

    python -m bench.servers.start_floor              # the interpreter, orjson and a blocking stdin loop
    python -m bench.servers.start_floor --libraries  # the same after importing what hexmcp's core and
                                                     # stdio adapter cannot start without

Not MCP servers: no lifecycle, no validation; `initialize` gets a minimal result, every other request
an empty one. bench/servers/orjson_stdio_loop.py cannot serve as a floor here: it imports hexmcp (and
reads the taxonomy) to build its payload. `python -m bench.cold_start` runs both floors beside
`hexmcp stdio`, so a figure says how much of a cold start is hexmcp's own (ADR 0011).
"""

from __future__ import annotations

import sys

import orjson

# What hexmcp.adapters.stdio and hexmcp.core import before any hexmcp code runs: asyncio on uvloop, and
# structlog, attrs and cattrs (orjson is above).
LIBRARIES = ("asyncio", "uvloop", "structlog", "attrs", "cattrs")
INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "start-floor", "version": "0"}}


def main(argv: list[str]) -> int:
    if "--libraries" in argv:
        for name in LIBRARIES:
            __import__(name)
    read, write, flush = sys.stdin.buffer.readline, sys.stdout.buffer.write, sys.stdout.buffer.flush
    while line := read():
        request = orjson.loads(line)
        if "id" in request:
            result = INITIALIZE if request.get("method") == "initialize" else {}
            write(orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + b"\n")
            flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
