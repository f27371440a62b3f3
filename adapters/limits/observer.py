"""The rate limiter: a `RequestObserver` that refuses requests over a client's budget with RATE_LIMITED.

Budgets are kept per client (`ObservedRequest.client_id`: a bearer token's digest, else the address;
the one client of a stdio process) and per transport, so a router's REST calls and its WebSocket spend
separate buckets, as the transports' own connection caps do. A `tools/call` of a tool with a limit of
its own spends that tool's bucket instead of the default one (a cheap `list_categories` can be allowed
more than a `classify_text`); every other request spends the default bucket.

The refusal carries `retryAfterSeconds` in its data: JSON-RPC clients read it there (-32002), the HTTP
adapter turns it into a `Retry-After` header on the 429 (`adapters/retry_hint.py`).
"""

from __future__ import annotations

import math
import time
from typing import Callable, Mapping

import attrs

from hexmcp.core import ErrorCode, ProtocolError
from hexmcp.core.observation import ObservedRequest, ObservedSession

from ..retry_hint import RETRY_AFTER_KEY
from .bucket import BucketRate, TokenBuckets


@attrs.frozen(kw_only=True)
class RateLimits:
    """What the operator configured: a default budget (None: unlimited) and budgets per tool name."""

    default: BucketRate | None = None
    tools: Mapping[str, BucketRate] = attrs.field(factory=dict)

    @property
    def active(self) -> bool:
        return self.default is not None or bool(self.tools)


class RateLimiter:
    def __init__(self, limits: RateLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._default = TokenBuckets(limits.default) if limits.default else None
        self._tools = {name: TokenBuckets(rate) for name, rate in limits.tools.items()}
        self.refused = 0

    def tracked_clients(self) -> int:
        """Buckets held now, across the default and the tools' tables (bounded: see bucket.py)."""
        return (len(self._default) if self._default else 0) + sum(len(b) for b in self._tools.values())

    def request_started(self, request: ObservedRequest) -> None:
        buckets, what = self._default, "requests"
        if request.method == "tools/call" and request.target in self._tools:
            buckets, what = self._tools[request.target], f"{request.target} calls"
        if buckets is None:
            return None
        admission = buckets.take((request.transport, request.client_id), self._clock())
        if admission.admitted:
            return None
        self.refused += 1
        rate = buckets.rate
        retry_after = math.ceil(admission.retry_after_s * 1000) / 1000  # never early: round up to the ms
        raise ProtocolError(ErrorCode.RATE_LIMITED,
                            f"Rate limit exceeded: {what} at most {rate.rate:g}/s (burst {rate.burst}) per client; "
                            f"retry after {retry_after:g} s",
                            {RETRY_AFTER_KEY: retry_after})

    def session_ended(self, session: ObservedSession) -> None:
        return None
