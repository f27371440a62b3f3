"""The connection ledger's rules (sans-IO, hypothesis against a plain model), the refusal bytes, and the
flags and settings that configure them: non-positive values are refused with a message naming them."""

from __future__ import annotations

import resource
from collections import Counter

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.app import cli
from hexmcp.adapters.http import HttpConfig
from hexmcp.adapters.http.admission import (REFUSAL_STATUS, RETRY_AFTER_S, Admitted, ConnectionLedger, Refusal,
                                            RefusalReason, refusal_bytes)
from hexmcp.adapters.http.descriptors import HEADROOM, connection_cap, raise_open_files_limit

ADDRESSES = st.sampled_from(["127.0.0.1", "127.0.0.2", "::1", "10.0.0.7"])


@given(per_address=st.integers(1, 4), total=st.integers(1, 6),
       steps=st.lists(st.tuples(st.booleans(), ADDRESSES), max_size=60))
def test_the_ledger_admits_exactly_what_the_caps_allow(per_address: int, total: int, steps) -> None:
    ledger = ConnectionLedger(per_address=per_address, total=total)
    tickets: list[Admitted] = []
    model: Counter[str] = Counter()
    for opening, address in steps:
        if not opening and tickets:
            ticket = tickets.pop(0)
            ledger.release(ticket)
            model[ticket.address] -= 1
            continue
        verdict = ledger.admit(address)
        if model[address] >= per_address:
            assert verdict == Refusal(address=address, reason=RefusalReason.PER_ADDRESS, cap=per_address)
        elif sum(model.values()) >= total:
            assert verdict == Refusal(address=address, reason=RefusalReason.TOTAL, cap=total)
        else:
            assert verdict == Admitted(address=address)
            tickets.append(verdict)
            model[address] += 1
        assert len(ledger) == sum(model.values()) <= total
        assert all(ledger.open_from(a) == n <= per_address for a, n in model.items())
    for ticket in tickets:
        ledger.release(ticket)
    assert len(ledger) == 0 and ledger.open_from("127.0.0.1") == 0


def test_releasing_more_than_was_admitted_is_an_error() -> None:
    ledger = ConnectionLedger(per_address=1, total=1)
    ticket = ledger.admit("127.0.0.1")
    assert isinstance(ticket, Admitted)
    ledger.release(ticket)
    with pytest.raises(ValueError, match="released more connections from 127.0.0.1"):
        ledger.release(ticket)


@given(address=ADDRESSES, reason=st.sampled_from(RefusalReason), cap=st.integers(1, 10**6))
def test_a_refusal_is_a_complete_http_response_that_closes(address: str, reason: RefusalReason, cap: int) -> None:
    refusal = Refusal(address=address, reason=reason, cap=cap)
    response = httpx.Response(REFUSAL_STATUS)  # for the standard reason phrase, from a table not ours
    head, _, body = refusal_bytes(refusal).partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == f"HTTP/1.1 {REFUSAL_STATUS} {response.reason_phrase}"
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    assert headers == {"retry-after": str(RETRY_AFTER_S), "connection": "close",
                       "content-type": "text/plain; charset=utf-8", "content-length": str(len(body))}
    assert body.decode() == refusal.message + "\n" and str(cap) in refusal.message


@pytest.mark.parametrize("field", ["per_address", "total"])
@pytest.mark.parametrize("value", [0, -1])
def test_the_ledger_refuses_caps_that_admit_nothing(field: str, value: int) -> None:
    caps = {"per_address": 1, "total": 1, field: value}
    with pytest.raises(ValueError, match=f"ConnectionLedger.{field} must be positive"):
        ConnectionLedger(**caps)


@pytest.mark.parametrize("field", ["head_timeout_s", "max_connections_per_address", "max_connections"])
def test_the_settings_refuse_non_positive_values(field: str) -> None:
    with pytest.raises(ValueError, match=f"HttpConfig.{field} must be positive"):
        HttpConfig(**{field: 0})


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--head-timeout", "0", "must be a positive number of seconds"),
    ("--head-timeout", "-2", "must be a positive number of seconds"),
    ("--head-timeout", "nan", "must be a positive number of seconds"),
    ("--head-timeout", "soon", "must be a positive number of seconds"),
    ("--max-connections-per-address", "0", "must be a positive integer"),
    ("--max-connections-per-address", "-5", "must be a positive integer"),
    ("--max-connections", "0", "must be a positive integer"),
    ("--max-connections", "1.5", "must be a positive integer"),
    # Once typed as plain int/float, these reached the settings class: "hexmcp serve: HttpConfig.max_body_bytes
    # must be positive, got 0", naming a class the user never wrote (bench/hostile_probes.py, group startup).
    ("--max-body-bytes", "0", "must be a positive integer"),
    ("--max-concurrent-requests", "-1", "must be a positive integer"),
    ("--max-sessions", "0", "must be a positive integer"),
    ("--request-timeout", "0", "must be a positive number of seconds"),
    ("--body-timeout", "-3", "must be a positive number of seconds"),
    ("--session-idle-timeout", "0", "must be a positive number of seconds"),
    ("--replay-retention", "inf", "must be a positive number of seconds"),
    ("--oauth-leeway", "inf", "must be 0 or a finite positive number of seconds"),  # no token would ever expire
    ("--oauth-leeway", "-1", "must be 0 or a finite positive number of seconds"),
])
def test_a_nonsensical_connection_flag_is_a_usage_error(flag: str, value: str, message: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.parse_args(["serve", flag, value])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert flag in error and message in error


def test_the_connection_flags_reach_the_settings_and_default_to_them() -> None:
    given_flags = cli.parse_args(["serve", "--head-timeout", "2.5", "--max-connections-per-address", "7",
                                  "--max-connections", "9"])
    assert (given_flags.head_timeout, given_flags.max_connections_per_address, given_flags.max_connections) == (2.5, 7, 9)
    defaults = cli.parse_args(["serve"])
    config = HttpConfig()
    assert (defaults.head_timeout, defaults.max_connections_per_address, defaults.max_connections) == (
        config.head_timeout_s, config.max_connections_per_address, config.max_connections)


def test_the_default_total_cap_keeps_headroom_below_the_descriptor_limit() -> None:
    assert connection_cap(1024) == 1024 - HEADROOM
    assert connection_cap(HEADROOM) == 1
    assert connection_cap(resource.RLIM_INFINITY) == (1 << 20) - HEADROOM


def test_raising_the_soft_limit_reaches_the_hard_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard <= 64:
        pytest.skip("needs a finite hard limit above 64")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard // 2, hard))
        limit = raise_open_files_limit()
        assert (limit.soft_before, limit.soft, limit.hard, limit.raised, limit.error) == (hard // 2, hard, hard, True, None)
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (hard, hard)
        again = raise_open_files_limit()
        assert (again.soft_before, again.soft, again.raised) == (hard, hard, False)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
