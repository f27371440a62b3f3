"""A hostile `Last-Event-ID` on a resuming GET: a clear 400, never a 500, and resumption still works.

`'²'.isdigit()` is true but `int('²')` raises, and `int` refuses more than 4300 digits: both once gave a
500 with a traceback (issue 30).
"""

from __future__ import annotations

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexmcp.adapters.http.sse import event_position
from hexmcp.wire import jsonrpc
from hexmcp.core import ErrorCode
from tests.adapters.http_live import live_server
from tests.adapters.http_wire import Wire
from tests.fixtures.demo_server import build_demo_server

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def live():
    with live_server(build_demo_server()) as server:
        yield server


@pytest.fixture(scope="module")
def session(live):
    wire = Wire(live.base)
    wire.initialize()
    yield wire
    wire.close()


def _resume(session: Wire, value: bytes) -> httpx.Response:
    """A GET that resumes after `value`; the body is not read (a new stream would stay open)."""
    headers = {**session.headers(), "accept": "text/event-stream", "last-event-id": value}
    with session.http.stream("GET", "/mcp", headers=headers) as response:
        if response.status_code != 200:
            response.read()
        return response


@pytest.mark.parametrize("value", ["1_²".encode(), "1_٣".encode(), b"1_" + b"9" * 5000, b"1_-1", b"_1", b"1_",
                                   b"1_1_1", b"abc", b"1_0x1f", b"\xb2_\xb2"])
def test_malformed_last_event_id_is_a_clear_400(session, value) -> None:
    response = _resume(session, value)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == jsonrpc.ERROR_CODES[ErrorCode.INVALID_REQUEST] and "Last-Event-ID" in error["message"]


def test_unknown_but_well_formed_id_opens_a_new_stream(session) -> None:
    assert _resume(session, b"999_1").status_code in (200, 409)  # 409: the previous GET not yet noticed gone


def test_event_position_accepts_exactly_what_a_stream_writes() -> None:
    assert event_position(b"12_345") == ("12", 345)
    assert event_position(b" 1_0 ") == ("1", 0)
    assert event_position("1_²".encode()) is None and event_position(b"1_2\n") is None


# Header values h11 will send: no CR, LF or NUL, no leading or trailing whitespace.
HEADER_BYTES = st.sampled_from([*b"0123456789_-+ \t", *"²٣①".encode(), *range(0x21, 0x7f), *range(0x80, 0x100)])
VALUES = st.one_of(
    st.lists(HEADER_BYTES, min_size=1, max_size=40).map(bytes),
    st.tuples(st.integers(0, 10**30), st.integers(-5, 10**30)).map(lambda p: f"{p[0]}_{p[1]}".encode()),
    st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=8).map(lambda t: f"1_{t}".encode()),
).map(lambda raw: raw.strip(b" \t")).filter(bool)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=VALUES)
def test_no_last_event_id_value_gives_a_server_error(session, value) -> None:
    response = _resume(session, value)
    assert response.status_code < 500, (value, response.status_code)
    if event_position(value) is None:
        assert response.status_code == 400
