"""The driver interface every transport implements, and what they share: ids, the log, the transcript.

A driver is a synchronous client for one connection (one stdio process, one HTTP session, one socket).
`send`/`send_raw` put traffic on the wire, `receive(timeout)` returns the next server message (None
when nothing came in time, `Closed` when the server hung up). `request` is send-and-wait built on those.
Every message either way is appended to `log` and passed to hypothesis `note()`, so a failing example
prints the exact message sequence that reproduces it (hypothesis has already shrunk it by then).

Server-to-client requests (sampling, elicitation, roots) are answered with -32601 at once: the suite
is a client that declares no capabilities, and a server must cope with that.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

from hypothesis import note
from hypothesis.errors import InvalidArgument

from hexmcp.wire.jsonrpc import JSONRPC_VERSION, METHOD_NOT_FOUND
from hexmcp.core import versions

from ...support.peer import initialize_params
from ...support.schemas import Transcript
from .. import deadlines
from ..deadlines import bounded, hung


class Closed(Exception):
    """The server closed the connection (EOF on stdout, socket closed, process gone)."""


def is_response(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message)


class Driver:
    name = "driver"
    framing = False
    """True when `send_raw` reaches the server's frame parser byte for byte (stdio: split/coalesced frames)."""
    requires_jsonrpc = True
    """False for the ChatGPT WebSocket dialect, where a message without `jsonrpc` is still valid."""
    binary_frames_refused = False
    """True for WebSocket: bytes that are not UTF-8 go as a binary frame, which may be refused (-32600)."""
    sessionful = True
    """False for the REST dialect: every call stands alone, so notifications and ordering mean nothing."""
    answers_come_with_requests = False
    """True for HTTP: every answer arrives with its POST, so an empty inbox means no more answers (and a hang
    shows in the POST itself), not that the server is still working."""

    def __init__(self) -> None:
        self.transcript = Transcript()
        self.version: str | None = None
        self.log: list[tuple[str, Any]] = []
        self._ids = itertools.count(1)

    # --- to implement ----------------------------------------------------------------------------

    def _write(self, message: Any) -> None:
        raise NotImplementedError

    def send_raw(self, data: bytes) -> None:
        raise NotImplementedError

    def _read(self, timeout: float) -> Any | None:
        """The next decoded message, None on timeout; raise Closed when the server is gone."""
        raise NotImplementedError

    def alive(self) -> bool:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # --- shared ----------------------------------------------------------------------------------

    def next_id(self) -> int:
        return next(self._ids)

    def mark(self) -> None:
        """Start a new window for `answered_since_mark`."""
        self._window: dict[Any, list[dict]] = {}

    def answered_since_mark(self) -> dict[Any, list[dict]]:
        return getattr(self, "_window", {})

    def record(self, direction: str, message: Any) -> None:
        self.log.append((direction, message))
        if direction == "<<" and is_response(message) and hasattr(self, "_window"):
            self._window.setdefault(_key(message.get("id")), []).append(message)
        text = message if isinstance(message, str) else json.dumps(message)
        try:
            note(f"{self.name} {direction} {text[:600]}")
        except InvalidArgument:
            pass  # outside a hypothesis test (a fixture, a script): the log alone keeps the record

    def send(self, message: Any) -> None:
        self.transcript.sent(message)
        self.record(">>", message)
        self._write(message)

    def raw(self, data: bytes) -> None:
        self.record(">>", f"(raw bytes) {data[:300]!r}{'...' if len(data) > 300 else ''} [{len(data)} bytes]")
        self.send_raw(data)

    def receive(self, timeout: float = 5.0) -> Any | None:
        message = self._read(bounded(timeout, self.log))
        if message is None:
            return None
        self.record("<<", message)
        if isinstance(message, dict) and "method" in message and "id" in message:
            self._write({"jsonrpc": JSONRPC_VERSION, "id": message["id"],
                         "error": {"code": METHOD_NOT_FOUND, "message": "this client declares no capabilities"}})
        return message

    def collect(self, ids: set[Any], timeout: float | None = None) -> tuple[dict[Any, list[dict]], list[Any]]:
        """Read until every id in `ids` has an answer: answers by id, everything else. Ends early when the
        wire says nothing more will come (HTTP: every answer came with its POST); ServerHung when `timeout`
        passes with a request still waiting (every request deserves an answer); default: the request deadline."""
        timeout = deadlines.REQUEST_S if timeout is None else timeout
        answers: dict[Any, list[dict]] = {}
        others: list[Any] = []
        deadline = time.monotonic() + timeout
        while not ids <= answers.keys():
            left = deadline - time.monotonic()
            if left <= 0:
                missing = sorted(str(k[1]) for k in ids - answers.keys())
                raise hung(f"{self.name}: no answer to request id(s) {', '.join(missing)} within {timeout:g} s",
                           self.log)
            message = self.receive(left)
            if message is None:
                if self.answers_come_with_requests:
                    break  # nothing queued: nothing more is coming
                continue  # the wait used the time left: the check above says so
            if is_response(message):
                answers.setdefault(_key(message.get("id")), []).append(message)
            else:
                others.append(message)
        return answers, others

    def drain(self, quiet: float = 0.05) -> tuple[dict[Any, list[dict]], list[Any]]:
        """Everything that arrives until the wire has been quiet for `quiet` seconds."""
        answers: dict[Any, list[dict]] = {}
        others: list[Any] = []
        while (message := self.receive(quiet)) is not None:
            if is_response(message):
                answers.setdefault(_key(message.get("id")), []).append(message)
            else:
                others.append(message)
        return answers, others

    def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> dict[str, Any] | None:
        """Send one request and return its answer (None if the wire ended without one; ServerHung if none came
        within `timeout`); other messages are logged."""
        request_id = self.next_id()
        message: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        answers, _ = self.collect({_key(request_id)}, timeout)
        found = answers.get(_key(request_id))
        return found[0] if found else None

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def initialize(self, version: str = versions.LATEST_HANDSHAKE_VERSION) -> dict[str, Any]:
        """Handshake (or, for a stateless version, just remember it); returns the server's answer."""
        answer = self.request("initialize", initialize_params(version))
        if answer is None or "result" not in answer:
            raise AssertionError(f"{self.name}: initialize was not answered with a result: {answer}")
        self.version = answer["result"]["protocolVersion"]
        self.transcript.version = self.version  # later answers are checked at the version agreed, not the default
        self.notify("notifications/initialized")
        return answer

    def probe(self) -> str:
        """The liveness request of the negotiated version: `ping`, or `server/discover` where ping is gone."""
        return "server/discover" if self.version in versions.STATELESS_VERSIONS else "ping"


def _key(request_id: Any) -> Any:
    # 1 and "1" are different ids, and True is not 1.
    return (type(request_id).__name__, request_id)


key = _key
