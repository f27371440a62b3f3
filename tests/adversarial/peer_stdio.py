"""A stdio client that answers the server's own requests badly: the asking server as a real subprocess."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from typing import Any

from hexmcp.core import versions

SERVER = [sys.executable, "-m", "tests.fixtures.asking_server"]


class StdioPeer:
    def __init__(self, capabilities: dict[str, Any], *, peer_timeout_s: float = 30.0) -> None:
        self._log = tempfile.TemporaryFile()  # a file, not a pipe: hundreds of log lines must not block the server
        self.process = subprocess.Popen([*SERVER, "--peer-timeout", str(peer_timeout_s)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self._log)
        self._buffer = b""
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": versions.V2025_06_18, "capabilities": capabilities,
                              "clientInfo": {"name": "hostile-peer", "version": "1"}}})
        assert "result" in self.read()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def read(self, timeout_s: float = 20.0) -> Any:
        """The next message, or None when nothing comes within `timeout_s` (or stdout ends)."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(fd, 1 << 16) if ready else b""
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def call(self, tool: str, request_id: int = 1) -> dict[str, Any]:
        """Call `tool` and return the request it makes of the client."""
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
        return self.read()

    def ping(self, request_id: int = 99) -> bool:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        return self.read() == {"jsonrpc": "2.0", "id": request_id, "result": {}}

    def finish(self) -> list[dict[str, Any]]:
        """Close stdin, wait for the exit and return the server's JSON log lines."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self._log.seek(0)
        lines = self._log.read().decode().splitlines()
        self._log.close()
        return [json.loads(line) for line in lines if line.startswith("{")]


def tool_text(answer: dict[str, Any]) -> str:
    return answer["result"]["content"][0]["text"]
