"""The token buckets (adapters/limits/bucket.py) and the limiter's choice of bucket, on a clock we hand in."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.adapters.limits import BucketRate, RateLimiter, RateLimits, TokenBuckets
from hexmcp.adapters.retry_hint import RETRY_AFTER_KEY, retry_after_header
from hexmcp.core import ErrorCode, ProtocolError
from hexmcp.core.observation import ObservedRequest

rates = st.builds(BucketRate, rate=st.floats(0.1, 1000, allow_nan=False), burst=st.integers(1, 50))
# Arrival times: increasing (a monotonic clock), gaps from zero (a burst) to a few refill intervals.
gaps = st.lists(st.floats(0, 3, allow_nan=False), min_size=1, max_size=200)
SLACK = 1e-6  # float rounding in the TAT sums: far below one token, so an off-by-one still fails


@settings(max_examples=300, deadline=None)
@given(rate=rates, gaps=gaps, scale=st.floats(0.001, 1))
def test_never_more_than_burst_plus_rate_times_t_in_any_window(rate: BucketRate, gaps: list[float],
                                                               scale: float) -> None:
    buckets, now, admitted = TokenBuckets(rate), 0.0, []
    for gap in gaps:
        now += gap * scale * rate.interval
        if buckets.take("k", now).admitted:
            admitted.append(now)
    for first in range(len(admitted)):
        for last in range(first, len(admitted)):
            window = admitted[last] - admitted[first]
            assert last - first + 1 <= rate.burst + rate.rate * window + SLACK


@settings(max_examples=200, deadline=None)
@given(rate=rates, gaps=gaps)
def test_a_refused_request_is_admitted_once_its_retry_after_has_passed(rate: BucketRate, gaps: list[float]) -> None:
    buckets, now = TokenBuckets(rate), 0.0
    for gap in gaps:
        now += gap * 0.01 * rate.interval
        answer = buckets.take("k", now)
        if not answer.admitted:
            assert 0 < answer.retry_after_s <= rate.interval + SLACK
            assert buckets.take("k", now + answer.retry_after_s + SLACK * rate.interval).admitted
            return


def test_a_full_burst_is_admitted_at_once_then_one_token_per_interval() -> None:
    buckets = TokenBuckets(BucketRate(rate=10, burst=3))
    assert [buckets.take("k", 0.0).admitted for _ in range(4)] == [True, True, True, False]
    assert buckets.take("k", 0.0).retry_after_s == pytest.approx(0.1)
    assert buckets.take("k", 0.1).admitted and not buckets.take("k", 0.1).admitted


def test_idle_keys_are_forgotten_so_memory_follows_recent_clients() -> None:
    rate = BucketRate(rate=100, burst=10)  # a bucket is full again 0.1 s after its last admission
    buckets = TokenBuckets(rate)
    for client in range(10_000):
        buckets.take(client, client * 0.001)  # 10 000 clients, one request each, a millisecond apart
        assert len(buckets) <= math.ceil(rate.burst * rate.interval / 0.001) + 1
    buckets.take("late", 100.0)
    assert len(buckets) == 1


def _request(tool: str | None, client: str = "c", transport: str = "http") -> ObservedRequest:
    return ObservedRequest(method="tools/call" if tool else "ping", target=tool, arguments={}, meta={},
                           request_key=None, session_id="s", client_id=client, trace_id="t",
                           protocol_version="2025-06-18", transport=transport)


def test_the_limiter_keys_by_client_and_transport_and_refuses_with_the_hint() -> None:
    clock = [0.0]
    limiter = RateLimiter(RateLimits(default=BucketRate(rate=1, burst=1),
                                     tools={"cheap": BucketRate(rate=100, burst=5)}), clock=lambda: clock[0])
    limiter.request_started(_request(None))
    with pytest.raises(ProtocolError) as refused:
        limiter.request_started(_request("costly"))
    assert refused.value.code is ErrorCode.RATE_LIMITED and refused.value.data == {RETRY_AFTER_KEY: 1.0}
    limiter.request_started(_request("costly", client="other"))  # another client: its own bucket
    limiter.request_started(_request("costly", transport="ws"))  # another transport: its own bucket
    for _ in range(5):
        limiter.request_started(_request("cheap"))  # the tool's budget, not the spent default
    with pytest.raises(ProtocolError):
        limiter.request_started(_request("cheap"))
    clock[0] = 1.0
    limiter.request_started(_request(None))
    assert limiter.refused == 2


@given(st.one_of(st.none(), st.floats(-10, 1e9), st.sampled_from([math.nan, math.inf, -math.inf]),
                 st.integers(-5, 10**6), st.text(), st.booleans()))
def test_the_retry_after_header_is_whole_seconds_never_early_or_absent(value: object) -> None:
    headers = retry_after_header({RETRY_AFTER_KEY: value})
    usable = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    if not usable:
        assert headers == []
        return
    [(name, raw)] = headers
    assert name == b"retry-after" and int(raw) >= max(1, value) and int(raw) < max(1, value) + 1
