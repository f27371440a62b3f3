"""Invariant 2: every message the server emits validates against the official schema of the negotiated version.

Each example picks a protocol version the target is asked to speak (every handshake version; 2026-07-28
too on hexmcp's HTTP), sends schema-generated requests on a connection negotiated at that version, and
checks every answer, notification and server request with `tests/support/schemas.Transcript`: results
against the method's result definition, errors against the error envelope, all at the version the
server actually agreed to (which may be lower than asked).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hexmcp.core import versions

from . import traffic
from .checks import restart_on_failure
from .drivers.base import key
from .profiles import budget
from .targets import Target


@budget(40)
@given(data=st.data())
def test_everything_the_server_says_matches_the_schema(target: Target, data: st.DataObject) -> None:
    version = data.draw(st.sampled_from(target.versions), label="version")
    driver = target.shared(version)
    with restart_on_failure(target, version):
        tools = target.tools() if version in versions.HANDSHAKE_VERSIONS else []
        requests = data.draw(st.lists(traffic.requests(version, tools), min_size=1, max_size=4), label="requests")
        ids = []
        for method, params in requests:
            request_id = driver.next_id()
            ids.append(request_id)
            driver.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        answers, others = driver.collect({key(i) for i in ids}, timeout=10)
        more_answers, more_others = driver.drain()
        checked = 0
        for message in [*(m for ms in answers.values() for m in ms), *others,
                        *(m for ms in more_answers.values() for m in ms), *more_others]:
            driver.transcript.received(message)
            checked += 1
        assert checked >= len(ids), f"only {checked} messages for {len(ids)} requests"
