"""JSON-RPC batches over stdio are capped in length, as over HTTP (issue 30).

Before: `hexmcp stdio` served every message of a batch line at once, however many it held, so one line of
1,000 requests (well under --max-message-bytes) started 1,000 things at once and pinned their answers until
the last was done. Now a batch longer than `--max-batch-messages` (default 64, HTTP's default) is refused
whole with -32600, and the session goes on: the next honest request is answered as ever. The WebSocket
adapter serves 2025-03-26 batches through the same RpcConnection, under the same default cap.
"""

from __future__ import annotations

import pytest

from hexmcp.adapters.rpc_connection import DEFAULT_MAX_BATCH_MESSAGES
from hexmcp.app import cli
from hexmcp.core import versions
from hexmcp.wire import jsonrpc

from ..support.wire import StdioServer
from .guard_servers import stdio_command

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]

BATCHING = versions.V2025_03_26  # the one version with JSON-RPC batches


def _pings(count: int, prefix: str) -> list[dict]:
    return [{"jsonrpc": "2.0", "id": f"{prefix}-{n}", "method": "ping"} for n in range(count)]


@pytest.fixture
def hexmcp_stdio():
    started: list[StdioServer] = []

    def start(*flags: str) -> StdioServer:
        server = StdioServer(stdio_command(*flags))
        started.append(server)
        server.initialize(BATCHING)
        return server

    yield start
    for server in started:
        server.kill()


def _refused_whole(server: StdioServer, count: int, cap: int) -> None:
    server.send(_pings(count, "flood"))
    reply = server.receive()
    assert isinstance(reply, dict), f"the batch was served: {len(reply)} answers"
    assert reply["id"] is None and reply["error"]["code"] == jsonrpc.INVALID_REQUEST
    assert reply["error"]["message"] == (f"Invalid request: a batch of {count} messages; this server takes at "
                                         f"most {cap} in one batch")


def test_a_batch_of_a_thousand_is_refused_whole_and_the_session_goes_on(hexmcp_stdio) -> None:
    server = hexmcp_stdio()
    _refused_whole(server, 1000, DEFAULT_MAX_BATCH_MESSAGES)
    # Nothing of the refused batch was served: the next message out is the honest request's answer.
    assert server.request("honest", "ping")["result"] == {}
    server.send(_pings(DEFAULT_MAX_BATCH_MESSAGES, "fits"))  # at the cap: every one answered
    answers = server.receive()
    assert sorted(m["id"] for m in answers) == sorted(f"fits-{n}" for n in range(DEFAULT_MAX_BATCH_MESSAGES))
    assert all(m["result"] == {} for m in answers)
    assert server.finish() == 0


def test_the_cap_is_the_max_batch_messages_flag(hexmcp_stdio) -> None:
    server = hexmcp_stdio("--max-batch-messages", "3")
    _refused_whole(server, 4, 3)
    server.send(_pings(3, "fits"))
    assert sorted(m["id"] for m in server.receive()) == ["fits-0", "fits-1", "fits-2"]
    assert server.request("honest", "ping")["result"] == {}
    assert server.finish() == 0


def test_the_flag_defaults_to_the_http_cap_and_refuses_nonsense(capsys) -> None:
    assert cli.parse_args(["stdio"]).max_batch_messages == DEFAULT_MAX_BATCH_MESSAGES
    assert cli.parse_args(["serve"]).max_batch_messages == DEFAULT_MAX_BATCH_MESSAGES
    with pytest.raises(SystemExit) as exit_info:
        cli.parse_args(["stdio", "--max-batch-messages", "0"])
    assert exit_info.value.code == 2 and "--max-batch-messages" in capsys.readouterr().err
