"""Hostile HTTP/1.1 heads and framing against the live server: a clear refusal or a clean close, never a
crash; ambiguous framing never lets a second request through; pipelined honest requests keep their order;
oversized heads get 431. After each example the server lives and an honest request succeeds."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from .budget import examples
from .hostile_bodies import hostile_bodies
from .hostile_heads import Framing, Head, framings, hostile_requests, pipelined_pings
from .judge import assert_answered_or_closed, assert_clear_refusal, assert_sane
from .live import ANSWER_TIMEOUT_S, JSON_ACCEPT, TOKEN, LiveServer
from .raw_http import exchange

pytestmark = pytest.mark.slow  # a live `hexmcp serve` subprocess

MIB = 1 << 20


@examples(60)
@given(head=hostile_requests())
def test_a_hostile_head_gets_a_clear_answer_or_a_close(live: LiveServer, head: Head) -> None:
    result = exchange(live.port, head.request, expect=2, timeout_s=ANSWER_TIMEOUT_S)
    assert_answered_or_closed(result, head.description)
    live.assert_alive(head.description)


@examples(30)
@given(framing=framings().filter(lambda framing: framing.ambiguous))
def test_ambiguous_framing_is_refused_and_nothing_behind_it_is_served(live: LiveServer, framing) -> None:
    """RFC 9112 §6.1/§6.3: both Content-Length and Transfer-Encoding, two lengths, or an encoding other
    than a final `chunked` must be refused and the connection closed: a proxy in front may read the
    message boundary differently, and the request hidden in the body (GET /health here) must never be
    answered."""
    request = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode()
               + b"\r\nContent-Type: application/json\r\nAccept: " + JSON_ACCEPT.encode() + b"\r\n"
               + b"\r\n".join(framing.headers) + b"\r\n\r\n" + framing.body)
    result = exchange(live.port, request, expect=2, timeout_s=ANSWER_TIMEOUT_S)
    assert len(result.responses) == 1, f"{framing.name}: {[r.status for r in result.responses]} answers"
    assert_clear_refusal(result.responses[0], framing.name)
    assert result.closed, f"{framing.name}: the connection stayed open after the refusal"
    live.assert_alive(framing.name)


@examples(25)
@given(before=st.integers(0, 5), hostile=hostile_bodies(), after=st.integers(0, 5))
def test_pipelined_requests_are_answered_in_order_around_a_hostile_body(live: LiveServer, before: int,
                                                                        hostile: bytes, after: int) -> None:
    """Well-framed requests on one kept-alive connection, one with a hostile body: every one is answered,
    in order, the honest ones with their own ids, the hostile one sanely; nothing is dropped or mixed up."""
    hostile_request = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode()
                       + b"\r\nContent-Type: application/json\r\nAccept: " + JSON_ACCEPT.encode()
                       + b"\r\nMcp-Session-Id: " + live.session_id.encode()
                       + b"\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n" % len(hostile) + hostile)
    requests = [*pipelined_pings(before, first_id=100), hostile_request, *pipelined_pings(after, first_id=200)]
    total = before + 1 + after
    result = exchange(live.port, b"".join(requests), expect=total, timeout_s=ANSWER_TIMEOUT_S)
    assert len(result.responses) == total, \
        f"{total} pipelined requests, {len(result.responses)} answers: {[r.status for r in result.responses]}"
    honest_ids = [*range(100, 100 + before), None, *range(200, 200 + after)]
    for position, (response, honest_id) in enumerate(zip(result.responses, honest_ids)):
        if honest_id is None:
            assert_sane(response, f"hostile body {hostile[:80]!r}")
            continue
        assert response.status == 200, f"honest request {position}: {response.status} {response.body[:200]!r}"
        assert json.loads(response.body).get("id") == honest_id, f"answer {position} out of order: {response.body!r}"
    live.assert_alive(f"pipelined hostile body {hostile[:80]!r}")


@examples(15)
@example(before=1, head=Head(b"GARBAGE\r\n\r\n", Framing("none", [], b""), "a junk request line"))
@given(before=st.integers(1, 4), head=hostile_requests())
def test_pipelined_honest_requests_before_a_hostile_head_are_all_answered(live: LiveServer, before: int,
                                                                          head: Head) -> None:
    """What precedes a broken message on a connection is answered in full and in order; what the broken
    message gets is sane (the connection may close after it)."""
    result = exchange(live.port, b"".join(pipelined_pings(before, first_id=300)) + head.request,
                      expect=before + 1, timeout_s=ANSWER_TIMEOUT_S)
    honest, rest = result.responses[:before], result.responses[before:]
    assert [json.loads(r.body).get("id") if r.status == 200 else r.status for r in honest] == \
        list(range(300, 300 + before)), f"{head.description}: honest answers {[r.status for r in honest]}"
    assert rest or result.closed, f"{head.description}: nothing after the honest answers, connection open"
    for response in rest:
        assert_sane(response, head.description)
    live.assert_alive(head.description)


def _oversized(size: int, shape: str) -> bytes:
    if shape == "one field":
        fields = [b"X-Big: " + b"a" * size]
    elif shape == "many fields":
        fields = [b"X-F%d: %s" % (i, b"b" * 8000) for i in range(size // 8000)]
    else:
        fields = [b"Cookie: " + b"c=1; " * (size // 5)]
    body = b'{"jsonrpc":"2.0","id":9,"method":"ping"}'
    return (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode()
            + b"\r\nContent-Type: application/json\r\nAccept: " + JSON_ACCEPT.encode() + b"\r\n"
            + b"\r\n".join(fields) + b"\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)


@examples(6)
@example(size=32 * MIB, shape="one field")
@given(size=st.sampled_from([1 * MIB, 4 * MIB, 32 * MIB]), shape=st.sampled_from(["one field", "many fields", "cookie"]))
def test_an_oversized_head_gets_431_and_the_server_lives(live: LiveServer, size: int, shape: str) -> None:
    result = exchange(live.port, _oversized(size, shape), timeout_s=ANSWER_TIMEOUT_S + 10)
    what = f"a {size // MIB} MiB head in {shape}"
    assert result.responses, f"{what}: closed without an answer"
    assert result.responses[0].status == 431, f"{what}: answered {result.responses[0].status}"
    assert_clear_refusal(result.responses[0], what)
    live.assert_alive(what)
