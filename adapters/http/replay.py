"""What the SSE events kept for `Last-Event-ID` resumption may cost: bytes per session, per client, in all.

Every resumable stream keeps its recent events so a client whose connection broke can pick up where it
left off (`sse.EventStream`). Counted in events alone that memory is the client's to choose: a client
that makes its answers large (an error echoing a 4 MB tool name, say) pins megabytes per event, for as
long as its session lives. So every kept event is also counted in bytes, in three pools: its session's,
its client's (`client_identity`: a client opening many sessions meets one cap) and the server's. When a
pool is over its cap the oldest events in it are forgotten first. An event larger than the smallest cap
is sent live but never kept: it would only push out everything else and then itself.

Caps bound what a client can pin; retention bounds how long. Resumption is for a connection that broke a
moment ago (the client retries after `retry` ms), so an event older than `retention_s` is forgotten, on the
next event kept anywhere and by the session sweeper. Without it, what a burst of traffic left behind would
stay until its sessions idle out (30 minutes by default), long after anyone could want it.

A resumer asking for an event that was forgotten gets what is still kept after it, as it does when the
per-stream event count (`HttpConfig.replay_events`) has already let it go.
"""

from __future__ import annotations

import itertools
import time
from collections import OrderedDict
from typing import Callable, Protocol

import attrs

EVENT_OVERHEAD = 96
"""Bytes counted per kept event besides its frame: the tuple, the ledger entry, the dict slots."""


class Forgetful(Protocol):
    """What keeps the events (an `EventStream`): told to drop one the ledger has evicted."""

    def forget(self, event: KeptEvent) -> None: ...


@attrs.define(eq=False, slots=True)
class KeptEvent:
    key: int
    size: int
    holder: Forgetful
    pools: tuple[Pool, ...]
    kept_at: float


@attrs.define(eq=False, slots=True)
class Pool:
    """Events counted against one cap, oldest first."""

    cap: int
    used: int = 0
    events: OrderedDict[int, KeptEvent] = attrs.field(factory=OrderedDict)

    def add(self, event: KeptEvent) -> None:
        self.events[event.key] = event
        self.used += event.size

    def remove(self, event: KeptEvent) -> None:
        if self.events.pop(event.key, None) is not None:
            self.used -= event.size


@attrs.define(eq=False, slots=True)
class ClientPool:
    pool: Pool
    sessions: int = 0


class ReplayLedger:
    """The server's replay memory; `session(client_id)` opens a session's account."""

    def __init__(self, *, per_session: int, per_client: int, total: int, retention_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.per_session = per_session
        self.retention_s = retention_s
        self._clock = clock
        self.per_client = per_client
        self.everything = Pool(cap=total)
        self.largest_kept = min(per_session, per_client, total)
        self._clients: dict[str, ClientPool] = {}
        self._keys = itertools.count()

    @property
    def used(self) -> int:
        return self.everything.used

    def client_used(self, client_id: str) -> int:
        client = self._clients.get(client_id)
        return client.pool.used if client is not None else 0

    def session(self, client_id: str) -> SessionReplay:
        client = self._clients.get(client_id)
        if client is None:
            client = self._clients[client_id] = ClientPool(Pool(cap=self.per_client))
        client.sessions += 1
        return SessionReplay(self, client_id, Pool(cap=self.per_session), client.pool)

    def keep(self, account: SessionReplay, holder: Forgetful, frame_bytes: int) -> KeptEvent | None:
        """Count an event `holder` is about to keep, evicting older ones over any cap; None: do not keep it."""
        size = frame_bytes + EVENT_OVERHEAD
        now = self._clock()
        self.expire(now)
        if size > self.largest_kept:
            return None
        pools = (account.pool, account.client, self.everything)
        event = KeptEvent(next(self._keys), size, holder, pools, now)
        for pool in pools:
            pool.add(event)
        for pool in pools:
            while pool.used > pool.cap:
                self.evict(next(iter(pool.events.values())))
        return event

    def expire(self, now: float | None = None) -> int:
        """Forget the events kept longer than `retention_s` (the oldest come first in the server's pool, so
        this costs one look when there is nothing to do); return how many."""
        if self.retention_s is None:
            return 0
        oldest_kept = (self._clock() if now is None else now) - self.retention_s
        events = self.everything.events
        expired = 0
        while events:
            event = next(iter(events.values()))
            if event.kept_at > oldest_kept:
                break
            self.evict(event)
            expired += 1
        return expired

    def evict(self, event: KeptEvent) -> None:
        event.holder.forget(event)
        self.release(event)

    @staticmethod
    def release(event: KeptEvent) -> None:
        """Uncount an event its holder dropped (too many events on its stream, the stream or session gone)."""
        for pool in event.pools:
            pool.remove(event)

    def session_closed(self, account: SessionReplay) -> None:
        for event in list(account.pool.events.values()):
            self.evict(event)
        client = self._clients.get(account.client_id)
        if client is not None:
            client.sessions -= 1
            if client.sessions <= 0 and not client.pool.events:
                del self._clients[account.client_id]  # a client that comes and goes must not grow the table


@attrs.define(eq=False, slots=True)
class SessionReplay:
    """One session's account in the ledger, handed to each of its streams."""

    ledger: ReplayLedger
    client_id: str
    pool: Pool
    client: Pool
    closed: bool = False

    def keep(self, holder: Forgetful, frame_bytes: int) -> KeptEvent | None:
        if self.closed:  # an event written after the session ended: no one can resume it
            return None
        return self.ledger.keep(self, holder, frame_bytes)

    def release(self, event: KeptEvent) -> None:
        self.ledger.release(event)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.ledger.session_closed(self)
