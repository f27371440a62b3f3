"""What clients hold open for long (SSE streams, WebSockets), counted per client and in total, shared fairly.

A global cap alone lets one client take every place: one OAuth subject (or one address) opening
1,024 WebSockets or GET streams from a few source addresses left every other client a 503 until it let
go. So each place is also counted against the client holding it (`client_identity`: the authenticated
principal, else the address, IPv6 grouped by /64: `address_group.py`), and a client at its own cap is
refused while others still get in. An entry leaves the table when its count drops to zero, so the table
only ever holds clients that hold something open.

The per-client cap alone still let eight clients at their caps fill the server (ADR 1161), so two more
rules (ADR 1214), both decided at connection open and close or by a timer, never per message:
- **Fair share.** When the server is full, a client holding less than its fair share (the total divided by
  the clients holding places, itself included) is admitted by closing the *oldest idle* place of the
  client holding the most, if that client holds more than the fair share. A place with a request in flight
  is never idle (`Holder.idle`), so no call is cut off; the closed connection is told why and may come back
  (a WebSocket close 1013, an SSE stream ended so the client resumes it).
- **Idle timeout.** A place whose `Holder.activity` has not changed for `idle_timeout_s`, and which is idle,
  is closed by a sweep that runs while anything evictable is held (so after 1 to 1.25 times the timeout).
"""

from __future__ import annotations

import asyncio
import time
from typing import Hashable, Protocol

import attrs
import structlog

from .settings import positive

log = structlog.get_logger("hexmcp.adapters")

SWEEPS_PER_TIMEOUT = 4
"""The idle sweep runs this many times per `idle_timeout_s`: a place is closed between 1 and 1.25 timeouts idle."""


class Holder(Protocol):
    """One connection holding a place, as the ledger needs to see it; each method is read only at eviction
    or by the idle sweep."""

    session_id: str
    """For the log line naming the eviction."""

    def idle(self) -> bool:
        """No request in flight on it: it may be closed without cutting off a call."""

    def activity(self) -> object:
        """A value that changes whenever the connection carries something (a message, an event)."""

    def let_go(self, reason: str, *, idle: bool) -> None:
        """Close it now, telling the client `reason` (`idle`: it timed out, else it made room for a newcomer);
        returns at once (the closing runs in its own task)."""


@attrs.define(kw_only=True)
class HeldOpen:
    what: str
    """What is counted, for the refusal messages ("WebSocket connections", "open streams")."""
    per_client: int = attrs.field(validator=positive)
    total: int = attrs.field(validator=positive)
    idle_timeout_s: float | None = attrs.field(default=None, validator=positive)
    """Close an idle place after this long without activity (None: never)."""
    _held: dict[Hashable, int] = attrs.field(factory=dict, init=False)
    _count: int = attrs.field(default=0, init=False)
    _holders: dict[Hashable, dict[Holder, None]] = attrs.field(factory=dict, init=False)
    """Each client's evictable places, oldest first (a dict keeps insertion order)."""
    _client_of: dict[Holder, Hashable] = attrs.field(factory=dict, init=False)
    _seen: dict[Holder, tuple[object, float]] = attrs.field(factory=dict, init=False)
    """The idle sweep's notes: each place's activity when last seen changing, and when."""
    _sweeper: asyncio.Task[None] | None = attrs.field(default=None, init=False)
    evicted: int = attrs.field(default=0, init=False)
    """Places closed for a newcomer, for operators and tests."""
    expired: int = attrs.field(default=0, init=False)
    """Places closed as idle, for operators and tests."""

    def __len__(self) -> int:
        return self._count

    def held_by(self, client: Hashable) -> int:
        return self._held.get(client, 0)

    def take(self, client: Hashable, holder: Holder | None = None) -> str | None:
        """None: the place is taken (give it back with `give`); else why it is refused. `holder`: the
        connection holding it, which fair share and the idle timeout may close (None: never closed)."""
        held = self._held.get(client, 0)
        if held >= self.per_client:
            return f"Too many {self.what} held by this client (limit {self.per_client}): close one or retry later"
        if self._count >= self.total and not self._make_room(client, held):
            return f"Too many {self.what} (limit {self.total}): retry later"
        self._held[client] = held + 1
        self._count += 1
        if holder is not None:
            self._holders.setdefault(client, {})[holder] = None
            self._client_of[holder] = client
            self._seen[holder] = (holder.activity(), time.monotonic())
            if self.idle_timeout_s is not None and self._sweeper is None:
                self._sweeper = asyncio.ensure_future(self._sweep_while_held())
        return None

    def give(self, client: Hashable, holder: Holder | None = None) -> None:
        """Give back a place `take` gave; exactly once per place. A place closed by the ledger (evicted,
        expired) was given back then: giving it again does nothing."""
        if holder is not None and self._client_of.pop(holder, None) is None:
            return
        self._forget(client, holder)

    def _forget(self, client: Hashable, holder: Holder | None) -> None:
        if holder is not None:
            own = self._holders[client]
            del own[holder]
            if not own:
                del self._holders[client]
            self._seen.pop(holder, None)
        left = self._held[client] - 1
        if left:
            self._held[client] = left
        else:
            del self._held[client]
        self._count -= 1

    def _release(self, holder: Holder, reason: str, *, idle: bool) -> Hashable:
        client = self._client_of.pop(holder)
        self._forget(client, holder)
        holder.let_go(reason, idle=idle)
        return client

    # --- fair share ------------------------------------------------------------------------------

    def fair_share(self, newcomer: Hashable) -> int:
        """The places each client would hold if the total were split evenly among those holding any and
        `newcomer`."""
        return max(1, self.total // (len(self._held) + (newcomer not in self._held)))

    def _make_room(self, newcomer: Hashable, held: int) -> bool:
        """The server is full: close the oldest idle place of the largest holder above the fair share, if the
        newcomer is below it. Runs only when the server is full, on a connection's opening."""
        if not self._holders:  # nothing here can be closed (token checks in flight, say): refuse at once
            return False
        fair = self.fair_share(newcomer)
        if held >= fair:
            return False
        above = [(count, client) for client, count in self._held.items() if count > fair and client in self._holders]
        for count, client in sorted(above, key=lambda item: item[0], reverse=True):
            victim = next((h for h in self._holders.get(client, ()) if h.idle()), None)
            if victim is None:
                continue  # every place it holds has a call in flight: try the next largest
            log.warning("held-open place closed for a newcomer", what=self.what, sessionId=victim.session_id,
                        client=str(client), held=count, fairShare=fair, newcomer=str(newcomer))
            self._release(victim, f"server full: this client holds {count} {self.what}, above its fair share of "
                                  f"{fair}; retry later", idle=False)
            self.evicted += 1
            return True
        return False

    # --- idle timeout ----------------------------------------------------------------------------

    async def _sweep_while_held(self) -> None:
        try:
            while self._client_of:
                await asyncio.sleep(self.idle_timeout_s / SWEEPS_PER_TIMEOUT)  # type: ignore[operator]
                self.sweep(time.monotonic())
        finally:
            self._sweeper = None

    def sweep(self, now: float) -> int:
        """Close the places idle for `idle_timeout_s` (activity unchanged since, and no call in flight); how many."""
        assert self.idle_timeout_s is not None
        closed = 0
        for holder in list(self._client_of):
            activity = holder.activity()
            seen = self._seen.get(holder)
            if seen is None or seen[0] != activity or not holder.idle():
                self._seen[holder] = (activity, now)
                continue
            if now - seen[1] >= self.idle_timeout_s:
                client = self._release(holder, f"idle for {self.idle_timeout_s:g} s", idle=True)
                log.info("idle held-open place closed", what=self.what, sessionId=holder.session_id,
                         client=str(client), idleTimeoutS=self.idle_timeout_s)
                self.expired += 1
                closed += 1
        return closed
