"""`hexmcp stdio`: nothing but protocol messages on stdout, at the file-descriptor level.

A real `hexmcp stdio` with a third-party pack (tests/fixtures/probe_pack) that writes to fd 1 at import,
from its tool, and through a child process; the official SDK client must read only valid messages, and
the text must land on stderr. A host that starts the server with stderr closed must not get the log and
the stray writes in the protocol stream either.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from ..support.hand_installed import pack_environment

PACK = Path(__file__).resolve().parents[1] / "fixtures" / "probe_pack" / "hexmcp_probe.py"
pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
SERVE = [sys.executable, "-m", "hexmcp.app.cli", "stdio", "--no-classifier", "--no-knowledge"]
NOISE = "NOISY-PACK"  # what the pack writes starts so (not imported here: importing it writes to fd 1)


@pytest.fixture(scope="module")
def with_pack(tmp_path_factory) -> dict[str, str]:
    return pack_environment(tmp_path_factory.mktemp("probe"), PACK, "probe", "ProbePack")


@pytest.mark.anyio
async def test_the_sdk_client_reads_only_messages_while_the_pack_writes_to_fd_1(with_pack, tmp_path) -> None:
    broken: list[Exception] = []

    async def on_message(message) -> None:
        if isinstance(message, Exception):  # a line on stdout that is not a JSON-RPC message
            broken.append(message)

    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], env=with_pack)
    with open(tmp_path / "stderr", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as streams:
            async with ClientSession(*streams, message_handler=on_message) as session:
                await session.initialize()
                result = await session.call_tool("shout", {})
                assert result.content[0].text == "quiet on the wire"
                await session.send_ping()
    assert broken == []
    stderr = (tmp_path / "stderr").read_text()
    for said in ("printed at import", "fd 1 at import", "fd 1 from the tool", "printed by a child process"):
        assert f"{NOISE} {said}" in stderr, said


def test_with_stderr_closed_stdout_still_holds_only_the_answers(with_pack) -> None:
    """fd 2 closed at start: the wire's private duplicate would take number 2, and fd 1 "pointed at
    stderr" would be the wire itself."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "0"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "shout", "arguments": {}}},
             {"jsonrpc": "2.0", "id": 3, "method": "no/such/method"}]
    script = 'exec "$@" 2>&-'
    done = subprocess.run(["sh", "-c", script, "sh", *SERVE, "--log-level", "debug"], env=with_pack, timeout=60,
                          input="".join(json.dumps(line) + "\n" for line in lines).encode(), capture_output=True)
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]  # every line parses
    assert [answer["id"] for answer in answers] == [1, 2, 3], answers
    assert answers[1]["result"]["content"][0]["text"] == "quiet on the wire"
    assert done.returncode == 0
