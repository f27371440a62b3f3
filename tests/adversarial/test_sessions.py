"""Hostile Mcp-Session-Id values and SSE resumption headers against the live server.

A session id that is not one the server issued gets a clear 400/404 on every method and never reaches,
ends or disturbs a real session. A Last-Event-ID that is not an event id the server could have sent
(`<stream>_<seq>`, ASCII digits) gets a clear 400, never a 500 and never a silently new stream; a
well-formed one resumes or opens a stream. After each example the honest session still works.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from .budget import examples
from .judge import assert_answered_or_closed, assert_clear_refusal
from .live import ANSWER_TIMEOUT_S, HONEST_VERSION, JSON_ACCEPT, TOKEN, LiveServer
from .raw_http import exchange

pytestmark = pytest.mark.slow  # a live `hexmcp serve` subprocess

HEADER_BYTES = st.one_of(st.binary(max_size=80).filter(lambda b: b"\r" not in b and b"\n" not in b),
                         st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass"))
                         .filter(lambda b: b"\r" not in b and b"\n" not in b))


def _request(method: bytes, headers: list[bytes], body: bytes = b"") -> bytes:
    lines = [method + b" /mcp HTTP/1.1", b"Host: 127.0.0.1", b"Authorization: Bearer " + TOKEN.encode(),
             b"Accept: " + (JSON_ACCEPT.encode() if method != b"GET" else b"text/event-stream"),
             b"MCP-Protocol-Version: " + HONEST_VERSION.encode(), *headers]
    if body:
        lines += [b"Content-Type: application/json", b"Content-Length: %d" % len(body)]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


@st.composite
def session_ids(draw: st.DrawFn, real: bytes) -> list[bytes]:
    """One or two Mcp-Session-Id values: junk, or near misses of the real id."""
    near = st.sampled_from([real.upper(), real[:-1], real + b"0", real[1:], b"0" + real, real + b"\x00",
                            real.replace(real[:1], b"\xd9\xa1", 1), real + b"," + real, b"%s, %s" % (real, b"x")])
    first = draw(st.one_of(HEADER_BYTES, near, st.sampled_from([b"", b" ", b"*", b"null", b"../" * 20, b"a" * 8000])))
    if draw(st.booleans()):
        return [first]
    return [first, draw(st.one_of(st.just(real), HEADER_BYTES))]


def _names_real_session(values: list[bytes], real: bytes) -> bool:
    return any(value.strip(b" \t") == real for value in values)


@examples(40)
@given(data=st.data(), method=st.sampled_from([b"POST", b"GET", b"DELETE"]))
def test_a_foreign_session_id_is_refused_and_the_real_session_is_untouched(live: LiveServer, data: st.DataObject,
                                                                           method: bytes) -> None:
    real = live.session_id.encode()
    values = data.draw(session_ids(real), label="session ids")
    if method == b"DELETE" and _names_real_session(values, real):
        values = [value for value in values if value.strip(b" \t") != real] or [b"x"]
    body = b'{"jsonrpc":"2.0","id":11,"method":"tools/list"}' if method == b"POST" else b""
    request = _request(method, [b"Mcp-Session-Id: " + value for value in values] + [b"Connection: close"], body)
    what = f"{method.decode()} with Mcp-Session-Id {values!r}"
    result = exchange(live.port, request, timeout_s=ANSWER_TIMEOUT_S, stream_head_is_enough=True)
    assert_answered_or_closed(result, what)
    assert result.responses, f"{what}: closed without an answer"
    answer = result.responses[0]
    if not _names_real_session(values, real):
        assert answer.status in (400, 404), f"{what}: answered {answer.status} {answer.body[:200]!r}"
        assert_clear_refusal(answer, what)
    live.assert_alive(what)


@pytest.fixture(scope="module")
def resumable(live: LiveServer) -> str:
    """A session whose GET stream has been opened (stream 1, with its priming event) and dropped: a
    Last-Event-ID naming stream 1 reaches the resumption code."""
    session_id = live.open_session(HONEST_VERSION)
    opened = exchange(live.port, _request(b"GET", [b"Mcp-Session-Id: " + session_id.encode()]),
                      timeout_s=ANSWER_TIMEOUT_S, stream_head_is_enough=True)
    assert opened.responses and opened.responses[0].status == 200, opened
    return session_id


@st.composite
def last_event_ids(draw: st.DrawFn) -> bytes:
    return draw(st.one_of(
        HEADER_BYTES,
        st.sampled_from([b"1_\xb2", b"1_\xc2\xb2", b"\xd9\xa1_\xd9\xa2", b"1_", b"_1", b"_", b"1__1", b"1_-1", b"1_+1",
                         b"1_0x1", b"1_1e3", b"1_" + b"9" * 5000, b"9" * 5000 + b"_1", b"1_1 1", b"1_\x00", b"1_0_0",
                         b"-1_0", b" 1_0", b"1_0\t", b"1_\xef\xbc\x91"]),
        st.builds(lambda a, b: b"%d_%d" % (a, b), st.integers(0, 10**12), st.integers(0, 10**15)),
    ))


def _well_formed(value: bytes) -> bool:
    stream, sep, seq = value.strip(b" \t").partition(b"_")
    return bool(sep) and stream.isdigit() and seq.isdigit() and stream.isascii() and seq.isascii() \
        and len(stream) <= 10 and len(seq) <= 18


@examples(40)
@example(value=b"1_\xb2")
@given(value=last_event_ids())
def test_a_malformed_last_event_id_gets_400_and_a_well_formed_one_a_stream(live: LiveServer,
                                                                       resumable: str,
                                                                       value: bytes) -> None:
    session_id = resumable
    request = _request(b"GET", [b"Mcp-Session-Id: " + session_id.encode(), b"Last-Event-ID: " + value,
                                b"Connection: close"])
    what = f"Last-Event-ID {value[:80]!r}"
    result = exchange(live.port, request, timeout_s=ANSWER_TIMEOUT_S, stream_head_is_enough=True)
    assert_answered_or_closed(result, what)
    assert result.responses, f"{what}: closed without an answer"
    answer = result.responses[0]
    if _well_formed(value) or not value.strip(b" \t"):  # an empty id is no id (the SSE spec's reading)
        assert answer.status in (200, 409), f"{what}: answered {answer.status} {answer.body[:200]!r}"
    else:
        assert answer.status == 400, f"{what}: answered {answer.status} {answer.body[:200]!r}"
        assert_clear_refusal(answer, what)
    live.assert_alive(what)
