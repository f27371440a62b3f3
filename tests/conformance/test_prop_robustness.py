"""Invariant 4: no generated input crashes, hangs or wedges a server; invalid input gets the right error.

Each example sends one piece of hostile traffic (traffic.invalid_cases: arbitrary JSON, wrong `jsonrpc`,
ids of the wrong type, missing members, unknown methods, non-object params, oversized strings, deep
nesting, invalid UTF-8, text that is not JSON), checks the answer against the spec's (`Expect`:
the error code, and an id that is the request's or null), then checks the server still answers `ping`.

Nesting deeper than 1000 levels has a property of its own, because hexmcp does not survive it (an
xfail with the reproduction, below) and the rest of the property must keep guarding everything else.
"""

from __future__ import annotations

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from . import traffic
from .checks import assert_alive, error_code, restart_on_failure
from .drivers import Closed
from .profiles import budget
from .targets import Target

SHALLOW = 1000


def exercise(target: Target, case: traffic.Case) -> None:
    driver = target.shared()
    with restart_on_failure(target):
        event(case.kind)
        driver.mark()
        try:
            if case.raw:
                driver.raw(case.payload)
            else:
                driver.send(case.payload)
        except Closed as exc:
            raise AssertionError(f"the server hung up on {case.kind}: {exc}") from None
        # The ping right behind it bounds the wait: whatever answers the case comes before the ping's answer
        # or with it (stdio and WebSocket answer invalid input inline; a request's answer has its own id).
        probe = assert_alive(driver, case.kind)
        driver.drain(quiet=0.02)
        replies = [m for ms in driver.answered_since_mark().values() for m in ms if m is not probe]
        if not case.expect.answer:
            assert not replies, f"{case.kind}: expected no answer, got {replies}"
            return
        assert replies, f"{case.kind}: expected an answer ({case.expect}), got none"
        assert len(replies) == 1, f"{case.kind}: expected one answer, got {replies}"
        reply = replies[0]
        assert reply.get("id") in case.expect.ids, \
            f"{case.kind}: answer id {reply.get('id')!r}, expected one of {case.expect.ids}: {reply}"
        if case.expect.codes is not None:
            assert error_code(reply) in case.expect.codes, f"{case.kind}: expected error {case.expect.codes}, got {reply}"
        if "error" in reply:
            driver.transcript.received(reply)


@pytest.mark.parametrize("kind", traffic.INVALID_KINDS)
@budget(5)
@given(data=st.data())
def test_invalid_traffic_gets_the_right_error_and_the_server_lives_on(target: Target, kind: str,
                                                                     data: st.DataObject) -> None:
    driver = target.shared()
    case = data.draw(traffic.invalid_cases(kind=kind, requires_jsonrpc=driver.requires_jsonrpc, max_depth=SHALLOW,
                                           binary_frames_refused=driver.binary_frames_refused), label="case")
    exercise(target, case)


@budget(5)
@example(depth=1_500, shape="array", where="message")
@example(depth=100_000, shape="object", where="params")
@given(depth=st.integers(SHALLOW, 100_000), shape=st.sampled_from(["array", "object"]),
       where=st.sampled_from(["message", "params"]))
def test_deep_nesting_is_answered_and_survived(target: Target, depth: int, shape: str, where: str) -> None:
    case = traffic.deep_case(depth, shape, where, request_id=target.shared().next_id())
    exercise(target, case)
