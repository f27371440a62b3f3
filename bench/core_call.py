"""The core's own work per `tools/call`, in process: no HTTP, no uvicorn, no socket.

    python -m bench.core_call [--requests N] [--rounds R]

What every transport asks of the core for one request, exactly as the HTTP floor (`bench/servers/core_asgi_floor.py`)
does it, in one task: the body decoded and classified (`jsonrpc`), served by one initialized core `Session`
(`rpc_layer.serve_request`: lifecycle, route, params, the tool's argument check, in-flight entry, the call, the
result's shape) and answered (`rpc_layer.answer`, `jsonrpc.dumps`), for the HTTP benchmark's `echo` tool.
Printed: thread CPU per request, best of the rounds.

Under `valgrind --tool=callgrind --callgrind-out-file=/dev/null`, run `--rounds 1` with two request counts
(e.g. 2,000 and 12,000) and divide the difference of the "Collected" totals by the difference of the counts:
the core's instructions per request, which `bench.http_protocol` counts together with uvicorn's and the
adapter's (bench/diaries/http.md).
"""

from __future__ import annotations

import argparse
import sys
import time
import orjson
import uvloop

from hexmcp.adapters import rpc_layer
from hexmcp.core import NullPeer
from hexmcp.wire import jsonrpc

from bench.http import ECHO_CALL, VERSION
from bench.http_inprocess import load_app


async def measure(requests: int, rounds: int) -> tuple[float, bytes]:
    load_app("floor")  # puts bench/servers on sys.path: the floor's server, with its echo tool
    from core_asgi_floor import server

    core = server.open_session(session_id="bench", peer=NullPeer(), assume_version=None, transport="http")
    traces = rpc_layer.TraceIds("c")
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}}
    await rpc_layer.serve_request(core, jsonrpc.classify(jsonrpc.decode(orjson.dumps(initialize))), traces.next())
    await core.handle_notification("notifications/initialized", None, trace_id=traces.next())
    bodies = [orjson.dumps({**ECHO_CALL, "id": n + 1}) for n in range(requests)]
    best, answer = float("inf"), b""
    for _ in range(rounds):
        started = time.thread_time()
        for body in bodies:
            request = jsonrpc.classify(jsonrpc.decode(body))
            assert isinstance(request, jsonrpc.Request)
            outcome = await rpc_layer.serve_request(core, request, traces.next())
            answer = jsonrpc.dumps(rpc_layer.answer(request.id, outcome))
        best = min(best, (time.thread_time() - started) / requests)
    return best * 1e6, answer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from hexmcp.core.log import configure_logging

    configure_logging("warning", json_output=True)  # as the benchmark servers run
    figure, answer = uvloop.run(measure(args.requests, args.rounds))
    assert b'"hi"' in answer and b"isError" not in answer, answer[:200]
    print(f"core, echo: {figure:.2f} µs thread CPU per tools/call (best of {args.rounds} x {args.requests})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
