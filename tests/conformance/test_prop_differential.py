"""Invariant 3: hexmcp's adapters agree. The same requests through stdio, Streamable HTTP, the REST dialect
and WebSocket (ChatGPT and `mcp` dialects) get the same results, modulo envelope.

"Modulo envelope" means: the `jsonrpc` member and the id are the transport's; an error is compared by
code, message and data, and a result as is, both with eventIds masked (unique per occurrence by design); notifications are not
compared (REST cannot carry them). Default mode only: it compares hexmcp with itself.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.core import versions

from . import traffic
from .profiles import budget
from .targets import DEFAULT_TARGETS, HexmcpServers, Target

VERSION = versions.LATEST_HANDSHAKE_VERSION


EVENT_ID = re.compile(r"ev-[0-9a-f]+-[0-9a-f]+")


def modulo_envelope(answer: dict[str, Any] | None) -> Any:
    if answer is None:
        return "(no answer)"
    if "result" in answer:
        # eventIds are unique per occurrence (they name one log line), wherever they appear
        return {"result": json.loads(EVENT_ID.sub("ev-*", json.dumps(answer["result"])))}
    error = dict(answer.get("error") or {})
    data = error.get("data")
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k != "eventId"}
        error["data"] = data or None
    return {"error": {k: v for k, v in error.items() if v is not None}}


@pytest.fixture(scope="module")
def transports(hexmcp_only: None, hexmcp_servers: HexmcpServers,
               target_pool: dict[str, Target]) -> list[Target]:
    for name in DEFAULT_TARGETS:
        target_pool.setdefault(name, hexmcp_servers.target(name))
    return [target_pool[name] for name in DEFAULT_TARGETS]


@budget(30)
@given(data=st.data())
def test_every_transport_gives_the_same_answers(transports: list[Target], data: st.DataObject) -> None:
    tools = transports[0].tools()
    requests = data.draw(st.lists(traffic.requests(VERSION, tools), min_size=1, max_size=4), label="requests")
    for method, params in requests:
        seen = {t.name: modulo_envelope(t.shared(VERSION).request(method, params)) for t in transports}
        reference = seen[transports[0].name]
        differing = {name: answer for name, answer in seen.items() if answer != reference}
        assert not differing, f"{method} {params}: {transports[0].name} said {reference}, but {differing}"
