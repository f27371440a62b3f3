"""How a server behaves where the protocol leaves the choice to it: page size, cache hints, timeouts."""

from __future__ import annotations

import attrs


@attrs.frozen(kw_only=True)
class ServerOptions:
    page_size: int = 100
    """Items per page of every list."""
    cache_ttl_ms: int = 60_000
    """2026-07-28 cache hint on list/read/discover results."""
    cache_scope: str = "public"
    """2026-07-28 cache scope: nothing we list depends on who asks."""
    request_state_secret: bytes | None = None
    """Key that seals multi round-trip state; instances behind one load balancer must share it."""
    tool_timeout_s: float | None = None
    """Stop a tool that runs longer than this and report the timeout as a tool error."""
    max_subscriptions: int = 256
    """Resource URIs one session may be subscribed to (`resources/subscribe`), and one
    `subscriptions/listen` may name; beyond it the request is refused (`subscription_limits.py`)."""
    max_uri_chars: int = 2048
    """Longest resource URI a subscription may name."""
