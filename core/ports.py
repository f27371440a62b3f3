"""The ports through which the core reaches the outside world. Adapters implement them.

The core never touches a socket or a stream: to send a notification or to ask the client something
(sampling, elicitation, roots on handshake versions) it calls the session's `Peer`. Requests are
named by an opaque `request_key` the adapter chose (a JSON-RPC id, typically); the core compares keys
and hands them back, nothing more.
"""

from __future__ import annotations

from typing import Any, Hashable, Protocol

RequestKey = Hashable


class PeerRequestFailed(Exception):
    """The client answered a server-initiated request with an error (or never answered)."""

    def __init__(self, message: str, code: int | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class Peer(Protocol):
    async def notify(self, method: str, params: dict[str, Any], *, related: RequestKey | None) -> None:
        """Send a notification; `related` is the request it belongs to (for routing on HTTP), if any."""

    async def request(self, method: str, params: dict[str, Any], *, related: RequestKey | None) -> dict[str, Any]:
        """Send a request to the client and return its result; raise `PeerRequestFailed` otherwise."""


class NullPeer:
    """A peer that drops notifications and refuses requests: for one-shot calls with no way back."""

    async def notify(self, method: str, params: dict[str, Any], *, related: RequestKey | None) -> None:
        return None

    async def request(self, method: str, params: dict[str, Any], *, related: RequestKey | None) -> dict[str, Any]:
        raise PeerRequestFailed("this transport cannot carry requests from the server to the client")

