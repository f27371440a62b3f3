"""Handshake-era HTTP sessions: id → (core session, peer, SSE streams), with caps and idle expiry.

Clients often never DELETE their session (the 0.1.13 conformance harness never does), so sessions
expire after `session_idle_timeout_s` without traffic, and when the table is full the least recently
used idle session of the client holding the most sessions makes room (ADR 1214). A session with a request
in flight or a stream open is never evicted (an idle stream is closed after `stream_idle_timeout_s`). One
client (`client_identity`) holds at most `max_sessions_per_client`: beyond it its own least recently used
idle session makes room, so a client opening session after session only ever evicts its own. What the
sessions' streams keep for resumption is counted in bytes by one `replay.ReplayLedger`.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict

import structlog

from hexmcp.core import McpServer, Session

from .. import rpc_layer
from .config import HttpConfig
from .peer import HttpPeer
from .replay import ReplayLedger, SessionReplay
from .sse import EventStream

log = structlog.get_logger("hexmcp.adapters.http")

KEPT_STREAMS = 16  # finished SSE streams per session kept for Last-Event-ID resumption


class HttpSession:
    def __init__(self, session_id: str, server: McpServer, config: HttpConfig, client_id: str | None = None,
                 replay: SessionReplay | None = None) -> None:
        self.id = session_id
        self.config = config
        self.client_id = client_id
        self.replay = replay
        self.pending = rpc_layer.pending_requests()
        self.peer = HttpPeer(pending=self.pending, timeout_s=config.client_request_timeout_s)
        self.core: Session = server.open_session(session_id=session_id, peer=self.peer, client_id=client_id,
                                                 transport="http")
        self.streams: OrderedDict[str, EventStream] = OrderedDict()
        self.last_used = time.monotonic()
        self.active = 0  # requests in flight and streams attached: such a session is never evicted
        self._stream_ids = 0

    def new_stream(self) -> EventStream:
        self._stream_ids += 1
        stream = EventStream(f"{self._stream_ids}", replay=self.config.replay_events,
                             retry_ms=self.config.sse_retry_ms, account=self.replay)
        self.streams[stream.stream_id] = stream  # type: ignore[index]
        if len(self.streams) > KEPT_STREAMS:
            # The oldest finished ones go; one still open (the GET stream, held for the session's life)
            # stays without keeping every stream opened after it.
            for old_id, old in list(self.streams.items()):
                if len(self.streams) <= KEPT_STREAMS:
                    break
                if old.finished.is_set():
                    del self.streams[old_id]
                    old.forget_all()
        return stream

    def find_event(self, stream_id: str, seq: int) -> tuple[EventStream, int] | None:
        """The stream to resume after event `seq` (`sse.event_position` parsed the header), None if unknown."""
        stream = self.streams.get(stream_id)
        if stream is None or not stream.knows(seq):
            return None
        return stream, seq

    def touch(self) -> None:
        self.last_used = time.monotonic()

    async def close(self) -> None:
        self.peer.closed = True
        rpc_layer.no_more_answers(self.pending, "the session ended")
        for stream in list(self.streams.values()):
            if not stream.finished.is_set():
                await stream.close()
        if self.replay is not None:
            self.replay.close()
        await self.core.close()


class SessionStore:
    def __init__(self, server: McpServer, config: HttpConfig) -> None:
        self._server = server
        self._config = config
        self._sessions: OrderedDict[str, HttpSession] = OrderedDict()  # least recently used first
        self._by_client: dict[str, dict[str, HttpSession]] = {}
        self.replay = ReplayLedger(per_session=config.replay_bytes_per_session,
                                   per_client=config.replay_bytes_per_client, total=config.replay_bytes_total,
                                   retention_s=config.replay_retention_s)

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: str) -> HttpSession | None:
        session = self._sessions.get(session_id)
        if session is not None:
            self._sessions.move_to_end(session_id)
            session.last_used = time.monotonic()  # `touch`, inline: this is every request's lookup
        return session

    def held_by(self, client_id: str) -> int:
        return len(self._by_client.get(client_id, ()))

    async def create(self, client_id: str | None = None) -> HttpSession | None:
        """A new session for `client_id`, or None when the table, or the client's share of it, is full of
        busy sessions."""
        client = client_id or "unknown"
        own = self._by_client.get(client)
        if own is not None and len(own) >= self._config.max_sessions_per_client:
            victim = _least_recently_used_idle(own)
            if victim is None:
                return None
            log.info("session of a client at its cap evicted to make room", sessionId=victim.id)
            await self.remove(victim.id)
        if len(self._sessions) >= self._config.max_sessions:
            await self.sweep()
        if len(self._sessions) >= self._config.max_sessions:
            victim = self._largest_holders_idle_session()
            if victim is None:
                return None
            log.info("session of the largest holder evicted to make room", sessionId=victim.id,
                     client=victim.client_id, held=self.held_by(victim.client_id or "unknown"), newcomer=client)
            await self.remove(victim.id)
        # 128 random bits, hex: unguessable and within the visible-ASCII range the spec requires.
        session = HttpSession(secrets.token_hex(16), self._server, self._config, client_id,
                              replay=self.replay.session(client))
        self._sessions[session.id] = session
        self._by_client.setdefault(client, {})[session.id] = session
        return session

    def _largest_holders_idle_session(self) -> HttpSession | None:
        """The least recently used idle session of the client holding the most (the next largest when all of
        its sessions are busy), so a full table costs the biggest holder, not whoever was idle longest (ADR
        1214). Runs only when the table is full."""
        if not self._by_client:
            return None
        victim = _least_recently_used_idle(max(self._by_client.values(), key=len))
        if victim is not None:
            return victim
        for own in sorted(self._by_client.values(), key=len, reverse=True):
            victim = _least_recently_used_idle(own)
            if victim is not None:
                return victim
        return None

    async def remove(self, session_id: str) -> bool:
        session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        client = session.client_id or "unknown"
        own = self._by_client.get(client)
        if own is not None:
            own.pop(session_id, None)
            if not own:
                del self._by_client[client]
        await session.close()
        return True

    async def sweep(self) -> int:
        """Close sessions idle for longer than the configured timeout; return how many."""
        deadline = time.monotonic() - self._config.session_idle_timeout_s
        expired = [s.id for s in self._sessions.values() if s.active == 0 and s.last_used < deadline]
        for session_id in expired:
            await self.remove(session_id)
        if expired:
            log.info("idle sessions expired", count=len(expired))
        return len(expired)

    async def run_sweeper(self) -> None:
        interval = min(60.0, self._config.session_idle_timeout_s / 2, self._config.replay_retention_s / 2)
        while True:
            await asyncio.sleep(interval)
            self.replay.expire()
            await self.sweep()

    async def close_all(self) -> None:
        for session_id in list(self._sessions):
            await self.remove(session_id)


def _least_recently_used_idle(sessions: dict[str, HttpSession]) -> HttpSession | None:
    idle = [s for s in sessions.values() if s.active == 0]
    return min(idle, key=lambda s: s.last_used) if idle else None
