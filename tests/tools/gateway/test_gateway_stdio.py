"""`hexmcp stdio` with and without a gateway: models/list over stdio, the -32005 "no gateway configured"
answers, nothing but protocol messages on stdout; and the catalogue's list-changed notifications."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from hexmcp.tools.gateway.outbound import GatewayConfig, RetryPolicy
from hexmcp.tools.gateway.outbound.openai_compatible import OpenAICompatibleGateway
from hexmcp.core import McpServer
from hexmcp.tools.gateway.port import GatewayErrorKind
from hexmcp.tools.gateway.mcp_tools import register_gateway_tools
from hexmcp.tools.gateway.resources import CATALOGUE_URI, model_uri
from hexmcp.tools.gateway.service import GatewaySettings
from tests.support.fake_gateway import fake_gateway
from tests.support.peer import CoreClient, RecordingPeer

pytestmark = [pytest.mark.timeout(120)]

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def _stdio_session(env_extra: dict[str, str], *messages: dict) -> tuple[list[dict], str]:
    env = {**os.environ, **env_extra}
    for name in ("GATEWAY_URL", "GATEWAY_CONFIG", "LOG_LEVEL", "HEXMCP_LOG_LEVEL"):
        if name not in env_extra:
            env.pop(name, None)
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, *messages]
    out = subprocess.run([sys.executable, "-m", "hexmcp.app.cli", "stdio", "--no-classifier", "--no-knowledge"],
                         input="".join(json.dumps(m) + "\n" for m in lines).encode(), capture_output=True,
                         timeout=60, env=env, check=False)
    assert out.returncode == 0, out.stderr.decode()
    answers = [json.loads(line) for line in out.stdout.decode().splitlines()]  # every stdout line is JSON
    return answers, out.stderr.decode()


def _by_id(answers: list[dict]) -> dict:
    return {a["id"]: a for a in answers if "id" in a}


@pytest.mark.slow
def test_without_a_gateway_the_tools_answer_minus_32005():
    answers, _ = _stdio_session({}, {"jsonrpc": "2.0", "id": 2, "method": "models/list"},
                                {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                 "params": {"name": "routeCompletion", "arguments": {"prompt": "hi"}}})
    replies = _by_id(answers)
    assert "models/list" in replies[1]["result"]["capabilities"]["experimental"]
    assert replies[2]["error"]["code"] == GatewayErrorKind.CONFIGURATION.value
    assert "no gateway configured" in replies[2]["error"]["message"]
    result = replies[3]["result"]
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"])["error"]["code"] == -32005


@pytest.mark.slow
def test_log_level_sets_the_level_unless_hexmcp_log_level_does():
    _, default = _stdio_session({})
    _, quiet = _stdio_session({"LOG_LEVEL": "error"})
    _, overridden = _stdio_session({"LOG_LEVEL": "error", "HEXMCP_LOG_LEVEL": "info"})
    assert "no gateway configured" in default and "no gateway configured" in overridden
    assert "no gateway configured" not in quiet


@pytest.mark.slow
def test_models_list_over_stdio():
    with fake_gateway() as upstream:
        answers, stderr = _stdio_session({"GATEWAY_URL": upstream.url, "DEFAULT_MODEL": "qwen3-32b"},
                                         {"jsonrpc": "2.0", "id": 2, "method": "models/list"})
    models = _by_id(answers)[2]["result"]["models"]
    assert [(m["id"], m["capabilities"]["served"]) for m in models] == [("qwen3-32b", True)]
    assert "gateway connection" in stderr


def test_a_change_in_the_gateways_list_is_announced():
    with fake_gateway() as upstream:
        async def run() -> RecordingPeer:
            server = McpServer("t", "1")
            gateway = OpenAICompatibleGateway(GatewayConfig(url=upstream.url, retries=RetryPolicy(max_retries=0)))
            tools = register_gateway_tools(server, gateway, None, GatewaySettings(default_model="qwen3-32b"))
            peer = RecordingPeer()
            client = CoreClient(server, peer)
            await client.initialize()
            await client.notify("notifications/initialized")
            await client.ok("resources/subscribe", {"uri": CATALOGUE_URI})
            await tools.start()
            await asyncio.sleep(0)
            peer.notifications.clear()
            upstream.models.remove("qwen3-32b")
            await tools.service.refresh()
            assert await tools.resources.sync() is True
            assert await tools.resources.sync() is False  # nothing new: nothing announced
            await asyncio.sleep(0.05)
            read = await client.ok("resources/read", {"uri": model_uri("qwen3-32b")})
            assert json.loads(read["contents"][0]["text"])["capabilities"]["served"] is False
            await gateway.aclose()
            return peer

        peer = asyncio.run(run())
    updated = peer.notified("notifications/resources/updated")
    assert {"uri": CATALOGUE_URI} in updated  # subscribed: told once
    assert len(updated) == 1
    # A model the gateway no longer serves stays listed (the catalogue lists the configured models; its entry
    # now says `served: false`, which the catalogue's `updated` above announces): the list a client would
    # re-list is the same, so it is not told to (core/list_changes.py).
    assert not peer.notified("notifications/resources/list_changed")
