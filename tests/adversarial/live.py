"""The live server the adversarial properties attack, and the honest client that checks it after each attack.

One `hexmcp serve` process (tests/support/serve_process.py) for the whole package, with a bearer token
and short head and body deadlines (so an example that sends half a request learns its fate in 2 s, not
30). `LiveServer.assert_alive` is the invariant every example ends with: the process still runs, and an
honest client's request in an honest session, sent right after the hostile one, succeeds.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any, Iterator

import httpx

from tests.support.serve_process import LIGHT, ServeProcess, serve_process

TOKEN = "adversarial-suite-token"
HEAD_TIMEOUT_S = 2.0
BODY_TIMEOUT_S = 2.0
MAX_BODY_BYTES = 1 << 20
ANSWER_TIMEOUT_S = HEAD_TIMEOUT_S + BODY_TIMEOUT_S + 4.0
"""How long an exchange waits for the server: past both deadlines, with room for a busy 2-core machine."""
HONEST_VERSION = "2025-06-18"
BATCH_VERSION = "2025-03-26"  # the last version that allows JSON-RPC batches
SERVE_FLAGS = (*LIGHT, "--auth-token", TOKEN, "--head-timeout", str(HEAD_TIMEOUT_S),
               "--body-timeout", str(BODY_TIMEOUT_S), "--max-body-bytes", str(MAX_BODY_BYTES))
JSON_ACCEPT = "application/json, text/event-stream"


def init_body(version: str, request_id: int = 0) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "adversarial-honest", "version": "1"}}}


class LiveServer:
    def __init__(self, served: ServeProcess, log: Path) -> None:
        self.served = served
        self.log = log
        self.port = served.port
        self.base = served.base
        self.http = httpx.Client(base_url=self.base, timeout=30, headers={
            "authorization": f"Bearer {TOKEN}", "content-type": "application/json", "accept": JSON_ACCEPT})
        self.session_id = self.open_session(HONEST_VERSION)
        self._next_id = 1

    def open_session(self, version: str) -> str:
        """A new initialized session of `version`; its Mcp-Session-Id."""
        answer = self.http.post("/mcp", json=init_body(version))
        assert answer.status_code == 200, f"initialize failed: {answer.status_code} {answer.text[:300]}"
        session_id = answer.headers["mcp-session-id"]
        done = self.http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                              headers={"mcp-session-id": session_id, "mcp-protocol-version": version})
        assert done.status_code == 202, done.text
        return session_id

    def session_headers(self, session_id: str | None = None, version: str = HONEST_VERSION) -> dict[str, str]:
        return {"mcp-session-id": session_id or self.session_id, "mcp-protocol-version": version}

    def honest_request(self) -> None:
        """tools/list in the honest session, on a connection of its own: 200 and a list of tools."""
        self._next_id += 1
        with httpx.Client(base_url=self.base, timeout=30) as fresh:
            answer = fresh.post("/mcp", json={"jsonrpc": "2.0", "id": self._next_id, "method": "tools/list"},
                                headers={"authorization": f"Bearer {TOKEN}", "content-type": "application/json",
                                         "accept": JSON_ACCEPT, **self.session_headers()})
        assert answer.status_code == 200, f"honest tools/list: {answer.status_code} {answer.text[:300]}"
        message = answer.json()
        assert message.get("id") == self._next_id and "tools" in message.get("result", {}), message

    def assert_alive(self, after: str) -> None:
        """The invariant each example ends with; `after` names the attack in the failure message."""
        code = self.served.process.poll()
        assert code is None, f"the server exited ({code}) after {after}; its log ends:\n{self.log_tail()}"
        try:
            self.honest_request()
        except (AssertionError, httpx.HTTPError) as failure:
            raise AssertionError(f"an honest request failed right after {after}: {failure}; "
                                 f"the server's log ends:\n{self.log_tail()}") from None

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def close(self) -> None:
        self.http.close()


@contextlib.contextmanager
def live_server(*extra_flags: str) -> Iterator[LiveServer]:
    """The server, its stderr in a file (thousands of refused requests would flood pytest's output)."""
    with tempfile.TemporaryDirectory(prefix="hexmcp-adversarial-") as folder:
        log = Path(folder) / "serve.log"
        with log.open("wb") as sink, serve_process(*SERVE_FLAGS, *extra_flags, stderr=sink) as served:
            live = LiveServer(served, log)
            try:
                yield live
            finally:
                live.close()
