"""Token buckets keyed by anything, as a generic cell rate algorithm (GCRA): one float per key.

A bucket of `burst` tokens refilled at `rate` tokens a second is the same thing as remembering, per key,
the "theoretical arrival time" (TAT) at which the bucket would be full again: a request at `now` is
admitted when `max(TAT, now) + 1/rate - now <= burst/rate`, and then moves the TAT on by `1/rate`.
One float per key, no refill timer, and the wait before the next admission falls out of the same sum,
which is what a `Retry-After` needs. Not a library: `limits` has windows rather than burst-then-rate,
`aiolimiter` waits instead of refusing, and `pyrate-limiter` needs several rates and a leak task.

Memory stays bounded by the clients active lately: a key whose TAT has passed has a full bucket, the same
as a key never seen, so it can be forgotten without changing any answer. Keys are kept in order of last
use and expired from the old end as calls come in; nothing runs in the background. Pure: the caller hands
in the clock reading.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Hashable

import attrs


@attrs.frozen(kw_only=True)
class BucketRate:
    """`rate` tokens a second, at most `burst` at once (burst >= 1: one request must fit)."""

    rate: float = attrs.field(validator=attrs.validators.gt(0))
    burst: int = attrs.field(validator=attrs.validators.ge(1))

    @property
    def interval(self) -> float:
        """Seconds one token takes to come back."""
        return 1.0 / self.rate


@attrs.frozen(kw_only=True)
class Admission:
    admitted: bool
    retry_after_s: float
    """0 when admitted; else the seconds until this key's next request would be."""


class TokenBuckets:
    """Buckets of one `BucketRate`, one per key, created full on first use."""

    def __init__(self, rate: BucketRate) -> None:
        self.rate = rate
        self._interval = rate.interval
        self._capacity = rate.burst * rate.interval  # how far ahead of now the TAT may run
        self._tats: OrderedDict[Hashable, float] = OrderedDict()  # oldest use first

    def __len__(self) -> int:
        return len(self._tats)

    def take(self, key: Hashable, now: float) -> Admission:
        """Spend one token of `key`'s bucket at time `now` (seconds, monotonic), if it has one."""
        self._expire(now)
        # The wait is summed from the backlog (previous TAT - now), not as tat - now: for a key with no
        # backlog that difference, (now + interval) - now, can round above the interval, and a bucket
        # just refilled would refuse with a retry-after of 2e-16 s.
        previous = max(self._tats.get(key, now), now)
        tat = previous + self._interval
        wait = (previous - now) + self._interval - self._capacity
        if wait > 0:
            return Admission(admitted=False, retry_after_s=wait)
        self._tats[key] = tat
        self._tats.move_to_end(key)
        return Admission(admitted=True, retry_after_s=0.0)

    def _expire(self, now: float) -> None:
        """Forget keys whose bucket is full again. Keys are in order of last admission, and a later
        admission never leaves an earlier TAT, so the first key still pending stops the sweep."""
        tats = self._tats
        while tats:
            key, tat = next(iter(tats.items()))
            if tat > now:
                return
            del tats[key]
