"""The requests a sessionless one-shot POST's server sends its client wait in one table shared by every
such POST (the answer comes back on another POST, from any client): their ids must be ones only the asked
client has seen, not `s-1`, `s-2`... that any client could answer by counting. A session's own table
keeps its short counted ids: only the session's holder can answer into it."""

from __future__ import annotations

import re

import pytest

from hexmcp.adapters.http import HttpConfig
from hexmcp.adapters.http.endpoint import McpEndpoint
from hexmcp.core import McpServer
from hexmcp.wire.jsonrpc import Response

pytestmark = pytest.mark.anyio


async def test_sessionless_question_ids_are_random_and_a_guess_answers_nothing() -> None:
    pending = McpEndpoint(McpServer("t", "0"), HttpConfig()).handshake_era.stateless_pending
    opened = [pending.open() for _ in range(50)]
    ids = [request_id for request_id, _ in opened]
    assert all(isinstance(i, str) and re.fullmatch(r"s-[A-Za-z0-9_-]{22}", i) for i in ids), ids[:3]  # 128 bits
    assert len(set(ids)) == len(ids)
    for guess in ("s-1", "s-2", "s-50", 1):
        assert not pending.resolve(Response(id=guess, result={}, error=None))
    assert pending.resolve(Response(id=ids[7], result={"roots": []}, error=None))
    assert opened[7][1].result().result == {"roots": []}
