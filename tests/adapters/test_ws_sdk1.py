"""The official MCP Python SDK 1.x `websocket_client` (subprotocol `mcp`) against a live hexmcp socket.

SDK 2.x dropped that client and the project venv pins 2.x, so the 1.x client runs as a subprocess in a
venv of its own, built once and cached (tests/fixtures/sdk1_venv.py). The first run downloads the SDK
from PyPI (~15 s); it is skipped, with pip's reason, only if that build fails.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hexmcp.wire import jsonrpc

from ..fixtures.demo_server import SERVER_NAME
from ..fixtures.sdk1_venv import VenvUnavailable, ensure_sdk1_python
from ..fixtures.ws_live import PROTOCOL_VERSION, live_ws, ws_demo_server

CLIENT = Path(__file__).resolve().parents[1] / "fixtures" / "ws_sdk1_client.py"

# Generous only because the first run builds the venv; cached runs take about two seconds.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]


@pytest.fixture(scope="module")
def sdk1_python() -> Path:
    try:
        return ensure_sdk1_python()
    except VenvUnavailable as exc:
        pytest.skip(f"could not build the MCP SDK 1.x venv: {exc}")


def test_sdk1_websocket_client_initializes_lists_and_calls_tools(sdk1_python: Path) -> None:
    with live_ws(ws_demo_server()) as server:
        done = subprocess.run([str(sdk1_python), str(CLIENT), server.url], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["server"] == SERVER_NAME
    assert report["protocolVersion"] == PROTOCOL_VERSION
    assert {"add", "echo", "ask_name", "slow"} <= set(report["tools"])
    assert report["add"] == {"structured": {"sum": 42}, "isError": False}
    assert report["echo"] == "héllo"
    assert report["refuse"]["isError"] and report["refuse"]["text"].startswith("not today")
    assert report["ask_name"] == "Hello, Ada!"  # elicitation answered over the same socket
    assert report["concurrent"] == [f"n{i}" for i in range(16)]
    assert report["unknown_tool"] == jsonrpc.INVALID_PARAMS
