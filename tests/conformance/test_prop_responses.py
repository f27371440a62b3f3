"""Invariant 1: every request gets exactly one response, carrying its own id; notifications get none.

Traffic is a pipelined burst of schema-generated requests and notifications (see traffic.py), with
integer and string ids (unicode included) that are unique on the connection. On stdio the same burst is
also written as one byte stream cut at arbitrary points: split frames, coalesced frames, or both.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.core import versions

from . import traffic
from .checks import check_answers, restart_on_failure
from .drivers.base import key
from .profiles import budget
from .targets import Target

STRING_IDS = st.text(min_size=1, max_size=8)


def burst(data: st.DataObject, target: Target, version: str, driver: Any) -> tuple[list[dict], list[Any]]:
    tools = target.tools() if version in versions.HANDSHAKE_VERSIONS else []
    items = data.draw(st.lists(st.one_of(traffic.requests(version, tools).map(lambda p: ("request", p)),
                                         traffic.notifications(version).map(lambda p: ("notification", p))),
                               min_size=1, max_size=6), label="burst")
    messages, ids = [], []
    for kind, (method, params) in items:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if kind == "request":
            serial = driver.next_id()
            request_id = data.draw(st.just(serial) | STRING_IDS.map(lambda s, n=serial: f"{s}#{n}"), label="id")
            message["id"] = request_id
            ids.append(request_id)
        messages.append(message)
    return messages, ids


@budget(40)
@given(data=st.data())
def test_each_request_is_answered_once_with_its_own_id(target: Target, data: st.DataObject) -> None:
    version = data.draw(st.sampled_from([versions.LATEST_HANDSHAKE_VERSION, *versions.STATELESS_VERSIONS])
                        if len(target.versions) > len(versions.HANDSHAKE_VERSIONS)
                        else st.just(versions.LATEST_HANDSHAKE_VERSION), label="version")
    driver = target.shared(version)
    with restart_on_failure(target, version):
        messages, ids = burst(data, target, version, driver)
        for message in messages:
            driver.send(message)
        answers, others = driver.collect({key(i) for i in ids}, timeout=10)
        sentinel = driver.request(driver.probe(), {} if driver.probe() != "ping" else None)
        assert sentinel is not None, "the liveness probe after the burst was not answered"
        late, _ = driver.drain()
        for k, ms in late.items():
            answers.setdefault(k, []).extend(ms)
        check_answers(ids, answers, others)


@pytest.mark.transports("stdio")
@budget(40)
@given(data=st.data())
def test_split_and_coalesced_frames_are_each_answered_once(target: Target, data: st.DataObject) -> None:
    driver = target.shared()
    if not driver.framing:
        pytest.skip(f"{target.name} has no byte stream to split")
    with restart_on_failure(target):
        messages, ids = burst(data, target, versions.LATEST_HANDSHAKE_VERSION, driver)
        stream = b"".join(json.dumps(m, ensure_ascii=data.draw(st.booleans(), label="ascii")).encode() + b"\n"
                          for m in messages)
        # Cut points as fractions: the stream's length depends on the ids, which depend on the connection.
        fractions = data.draw(st.lists(st.floats(0, 1), max_size=8), label="cuts")
        cuts = sorted({min(len(stream) - 1, max(1, int(f * len(stream)))) for f in fractions})
        for m in messages:
            driver.transcript.sent(m)
        for start, end in zip([0, *cuts], [*cuts, len(stream)]):
            driver.raw(stream[start:end])
        answers, others = driver.collect({key(i) for i in ids}, timeout=10)
        check_answers(ids, answers, others)
