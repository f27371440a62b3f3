"""Property: every JSON-RPC error stdio and WebSocket send names the request's id whenever it could be read.

Both transports answer through `RpcConnection`; it is driven here in memory with arbitrary messages
that carry a readable id (an integer or a string), whatever else is wrong with them: a missing or wrong
`jsonrpc`, a missing, empty or unknown method, arbitrary params, before or after the handshake.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexmcp.adapters.rpc_connection import RpcConnection
from hexmcp.core import versions
from hexmcp.core.handlers import ROUTES

from ..fixtures.demo_server import build_demo_server
from ..support.peer import initialize_params
from ..support.strategies import JSON_VALUES

SERVER = build_demo_server()
# subscriptions/listen answers only when the stream ends; it is exercised by its own tests.
METHODS = st.sampled_from(sorted(set(ROUTES) - {"subscriptions/listen", "initialize"})) | st.text(max_size=20)
IDS = st.integers(min_value=-(2**53), max_value=2**53) | st.text(max_size=20)
ENVELOPES = st.fixed_dictionaries({"id": IDS}, optional={
    "jsonrpc": st.sampled_from(["2.0", "1.0", 2]),
    "method": METHODS | JSON_VALUES,
    "params": JSON_VALUES,
})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message=ENVELOPES, initialized=st.booleans())
def test_every_answer_names_the_request_id(message: dict[str, Any], initialized: bool) -> None:
    async def scenario() -> dict[str, Any]:
        sent: asyncio.Queue[Any] = asyncio.Queue()
        connection = RpcConnection(SERVER, sent.put)
        if initialized:
            await connection.receive({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                                      "params": initialize_params(versions.LATEST_HANDSHAKE_VERSION)})
            assert "result" in await asyncio.wait_for(sent.get(), 5)
        await connection.receive(message)
        try:
            return await asyncio.wait_for(sent.get(), 5)
        finally:
            await connection.close()

    answer = asyncio.run(scenario())
    assert answer["id"] == message["id"]
