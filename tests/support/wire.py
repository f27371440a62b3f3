"""A raw stdio client: the server as a subprocess, newline-delimited JSON-RPC over its pipes.

Every line the server writes to stdout must parse as JSON and pass the schema check of the
conversation's `Transcript`; anything else fails the test at the line that broke the rule. stderr
is collected for the tests that look at logs.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from hexmcp.core import versions

from . import schemas
from .peer import initialize_params

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_SERVER = [sys.executable, "-m", "tests.fixtures.demo_server"]
_EOF = object()


class StdioServer:
    def __init__(self, command: list[str] | None = None, *, args: list[str] | None = None) -> None:
        self.process = subprocess.Popen([*(command or DEMO_SERVER), *(args or [])], cwd=REPO_ROOT,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.transcript = schemas.Transcript()
        self._lines: queue.Queue[Any] = queue.Queue()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    # --- writing ---------------------------------------------------------------------------------

    def send(self, message: Any) -> None:
        self.transcript.sent(message)
        self.write((json.dumps(message) + "\n").encode())

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    # --- reading ---------------------------------------------------------------------------------

    def receive(self, timeout: float = 10.0) -> Any:
        """The next message from stdout, already checked against the schema."""
        line = self._lines.get(timeout=timeout)
        if line is _EOF:
            raise EOFError("the server closed stdout")
        try:
            message = json.loads(line)
        except ValueError as exc:
            raise AssertionError(f"a non-JSON line on stdout: {line!r}") from exc
        self.transcript.received(message)
        return message

    def request(self, request_id: Any, method: str, params: Any = None, *, timeout: float = 10.0) -> dict[str, Any]:
        """Send a request and return its response, failing on anything else arriving first."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        reply = self.receive(timeout)
        assert reply.get("id") == request_id, f"expected the answer to {request_id}, got {reply}"
        return reply

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def initialize(self, version: str = versions.LATEST_HANDSHAKE_VERSION, capabilities: dict | None = None) -> dict:
        reply = self.request("init", "initialize", initialize_params(version, capabilities))
        self.notify("notifications/initialized")
        return reply["result"]

    def nothing_more(self, wait: float = 0.3) -> bool:
        try:
            line = self._lines.get(timeout=wait)
        except queue.Empty:
            return True
        self._lines.put(line)
        return False

    def rest_of_stdout(self, timeout: float = 10.0) -> list[Any]:
        """Every message until the server closes stdout."""
        messages = []
        while True:
            try:
                messages.append(self.receive(timeout))
            except EOFError:
                return messages

    def stderr_text(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")

    def finish(self, timeout: float = 10.0) -> int:
        """Close stdin, and return the exit code once the server has gone."""
        if self.process.stdin and not self.process.stdin.closed:
            self.close_stdin()
        return self.process.wait(timeout)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)

    def _pump_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(_EOF)

    def _pump_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)
