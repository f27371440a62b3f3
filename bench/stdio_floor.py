"""The floor under any MCP client over stdio: a blocking write/readline loop on the same server program.

One echo `tools/call` written to the server's stdin per call, its answer line read back with a buffered
blocking readline; nothing parsed, nothing correlated, no event loop turn. The call is a coroutine only
to fit bench/client.py's `call(text) -> awaitable` shape: it never awaits, so it always runs one call
in flight whatever `--concurrency` says. What is left between a client and this floor is the client's
own per-call work (and its event loop's); what is under it is the server's and the pipes'.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
from typing import Any, AsyncIterator, Sequence

from hexmcp.core import versions


def _line(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"


@contextlib.asynccontextmanager
async def blocking_pipe(command: Sequence[str]) -> AsyncIterator[Any]:
    process = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, io.BufferedReader(process.stdout, 1 << 16)
    try:
        stdin.write(_line(0, "initialize", {"protocolVersion": versions.LATEST_HANDSHAKE_VERSION, "capabilities": {},
                                            "clientInfo": {"name": "bench-floor", "version": "1"}}))
        if b'"result"' not in stdout.readline():
            raise RuntimeError("the server refused the floor's initialize")
        stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

        async def call(text: str) -> bytes:
            stdin.write(_line(1, "tools/call", {"name": "echo", "arguments": {"text": text}}))
            return stdout.readline()

        yield call
    finally:
        stdin.close()
        process.wait(timeout=10)
