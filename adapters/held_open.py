"""What clients hold open for long (SSE streams, WebSockets), counted per client and in total.

A global cap alone lets one client take every place: one OAuth subject (or one address) opening
1,024 WebSockets or GET streams from a few source addresses left every other client a 503 until it let
go, and an idle socket or stream is never closed by the server. So each place is also counted against
the client holding it (`client_identity`: the authenticated principal, else the address), and a client
at its own cap is refused while others still get in. An entry leaves the table when its count drops
to zero, so the table only ever holds clients that hold something open.
"""

from __future__ import annotations

from typing import Hashable

import attrs

from .settings import positive


@attrs.define(kw_only=True)
class HeldOpen:
    what: str
    """What is counted, for the refusal messages ("WebSocket connections", "open streams")."""
    per_client: int = attrs.field(validator=positive)
    total: int = attrs.field(validator=positive)
    _held: dict[Hashable, int] = attrs.field(factory=dict, init=False)
    _count: int = attrs.field(default=0, init=False)

    def __len__(self) -> int:
        return self._count

    def held_by(self, client: Hashable) -> int:
        return self._held.get(client, 0)

    def take(self, client: Hashable) -> str | None:
        """None: the place is taken (give it back with `give`); else why it is refused."""
        held = self._held.get(client, 0)
        if held >= self.per_client:
            return f"Too many {self.what} held by this client (limit {self.per_client}): close one or retry later"
        if self._count >= self.total:
            return f"Too many {self.what} (limit {self.total}): retry later"
        self._held[client] = held + 1
        self._count += 1
        return None

    def give(self, client: Hashable) -> None:
        """Give back a place `take` gave; exactly once per place."""
        left = self._held[client] - 1
        if left:
            self._held[client] = left
        else:
            del self._held[client]
        self._count -= 1
