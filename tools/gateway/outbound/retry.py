"""Which gateway failures are retried, and how long to wait before the next attempt.

Retried: rate limits (429), timeouts (and 408), connection errors and 5xx. Never: 400, 401, 403,
404 or any other refusal, which would fail the same way again. Waits grow linearly or exponentially
from `delay_s` (1 s, 2 s, 4 s by default), each scaled by a random factor in [1 - jitter, 1] so that
callers rejected together do not all come back together; a `Retry-After` the gateway sent replaces the
computed wait, up to `retry_after_cap_s`. tenacity runs the loop once a first attempt has failed; this
module decides.

The design and its trade-offs: docs/adr/0702-gateway-retries.md.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any, Awaitable, Callable, Literal

import attrs
from attrs import validators as v

from ..port import GatewayFailure

Backoff = Literal["linear", "exponential"]
BACKOFFS: tuple[str, ...] = ("linear", "exponential")


@attrs.frozen(kw_only=True)
class RetryPolicy:
    max_retries: int = attrs.field(default=3, validator=[v.instance_of(int), v.ge(0)])
    """Attempts after the first (default 3: up to 4 requests in all)."""
    delay_s: float = attrs.field(default=1.0, validator=v.ge(0.0))
    backoff: Backoff = attrs.field(default="exponential", validator=v.in_(BACKOFFS))
    max_delay_s: float = attrs.field(default=30.0, validator=v.ge(0.0))
    retry_after_cap_s: float = attrs.field(default=30.0, validator=v.ge(0.0))
    """A longer Retry-After is cut to this: a caller waits on us, and its own deadline is usually near."""
    jitter: float = attrs.field(default=0.25, validator=[v.ge(0.0), v.le(1.0)])

    def wait_before(self, retry: int, retry_after_s: float | None) -> float:
        """Seconds to wait before retry number `retry` (1 for the first retry)."""
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.retry_after_cap_s)
        growth = retry if self.backoff == "linear" else 2 ** (retry - 1)
        base = min(self.delay_s * growth, self.max_delay_s)
        return base * (1.0 - self.jitter * random.random())


class RetryableFailure(Exception):
    """An attempt failed in a way worth trying again (raised inside the retry loop only)."""

    def __init__(self, failure: GatewayFailure, retry_after_s: float | None = None) -> None:
        super().__init__(failure.message)
        self.failure = failure
        self.retry_after_s = retry_after_s


Attempt = Callable[[int], Awaitable[Any]]
"""One attempt, given its number (1-based): its result, a final `GatewayFailure`, or it raises
`RetryableFailure`."""


async def with_retries(policy: RetryPolicy, attempt: Attempt,
                       on_retry: Callable[[RetryableFailure, int, float], None] | None = None) -> Any:
    """Run `attempt` until it returns or the retries run out; the last failure carries the attempts made.
    The first attempt runs on its own: most calls end there, and building tenacity's loop for them cost
    a routed completion more event-loop time than the rest of this module."""
    try:
        return await attempt(1)
    except RetryableFailure as first:
        if policy.max_retries == 0:
            return attrs.evolve(first.failure, attempts=1)
        wait_s = policy.wait_before(1, first.retry_after_s)
        if on_retry is not None:
            on_retry(first, 1, wait_s)
    await asyncio.sleep(wait_s)
    return await _retries(policy, attempt, on_retry)


async def _retries(policy: RetryPolicy, attempt: Attempt,
                   on_retry: Callable[[RetryableFailure, int, float], None] | None) -> Any:
    """Attempts 2 and on, after the first failed and its wait was slept: tenacity runs the loop."""
    import tenacity  # here: the configuration (imported at start-up) needs only RetryPolicy

    # tenacity counts its own attempts from 1: ours are one more (the first ran before it).
    def wait(state: Any) -> float:
        error = state.outcome.exception() if state.outcome else None
        retry_after = error.retry_after_s if isinstance(error, RetryableFailure) else None
        return policy.wait_before(state.attempt_number + 1, retry_after)

    def before_sleep(state: Any) -> None:  # only when another attempt follows (wait runs on the last one too)
        error = state.outcome.exception() if state.outcome else None
        if on_retry is not None and isinstance(error, RetryableFailure):
            on_retry(error, state.attempt_number + 1, state.next_action.sleep)

    retrying = tenacity.AsyncRetrying(stop=tenacity.stop_after_attempt(policy.max_retries), wait=wait,
                                      retry=tenacity.retry_if_exception_type(RetryableFailure),
                                      before_sleep=before_sleep, reraise=True)
    number = 1
    try:
        async for attempt_state in retrying:
            with attempt_state:
                number = attempt_state.retry_state.attempt_number + 1
                return await attempt(number)
    except RetryableFailure as last:
        return attrs.evolve(last.failure, attempts=number)
    raise AssertionError("unreachable: tenacity either returns, retries or re-raises")
