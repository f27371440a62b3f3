"""The two long-lived SSE streams as `held_open.Holder`s: what fair share and the idle timeout may close.

Each is made when its place is taken, before the stream exists (`attach` fills it in); until then it is
not idle, so nothing closes a stream still being set up.
- A **GET stream** (handshake era) is idle when its session has nothing else going on (`active` counts this
  stream and every request in flight, so a POST's tool call keeps it), and active while the session's
  requests or the stream's events go by. Closing it ends the response but not the stream: the client
  resumes it with `Last-Event-ID`, missing nothing kept meanwhile.
- A **subscriptions/listen stream** (2026-07-28) is one long request that calls no tool: always idle, active
  while events go by. Closing it ends the listen as a shutdown does (its final result, then the stream
  ends); the client listens again.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hexmcp.core import Session

from .asgi import Send
from .sessions import HttpSession
from .sse import EventStream


class HeldGetStream:
    def __init__(self, session: HttpSession) -> None:
        self.session = session
        self.session_id = session.id
        self._stream: EventStream | None = None
        self._send: Send | None = None

    def attach(self, stream: EventStream, send: Send) -> None:
        self._stream, self._send = stream, send

    def idle(self) -> bool:
        return self._stream is not None and self.session.active <= 1

    def activity(self) -> Any:
        return self.session.last_used, self._stream.events if self._stream is not None else 0

    def let_go(self, reason: str, *, idle: bool) -> None:
        if self._stream is not None:
            asyncio.ensure_future(self._stream.let_go(self._send))  # type: ignore[arg-type]


class HeldListen:
    def __init__(self) -> None:
        self.session_id = "-"
        self._core: Session | None = None
        self._stream: EventStream | None = None

    def attach(self, core: Session, stream: EventStream) -> None:
        self._core, self._stream, self.session_id = core, stream, core.session_id

    def idle(self) -> bool:
        return self._core is not None

    def activity(self) -> Any:
        return self._stream.events if self._stream is not None else 0

    def let_go(self, reason: str, *, idle: bool) -> None:
        if self._core is not None:
            self._core.closed.set()  # what the listen handler waits on, as at shutdown (`end_streams`)
