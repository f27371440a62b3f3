"""A third-party tool pack installed from a folder (tests/fixtures/dice_pack) is found through the
`hexmcp.packs` entry points like the built-in packs, and its tool is served over stdio, Streamable HTTP,
the REST dialect and WebSocket, with its flag, its /health block and its metric."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from hexmcp.client import McpClient

from ..support.net import free_port
from ..support.serve_process import http_process

PACK = Path(__file__).resolve().parents[1] / "fixtures" / "dice_pack"
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def with_pack(tmp_path_factory) -> dict[str, str]:
    """An environment where the pack is installed: pip installs it into a folder put on PYTHONPATH (so the
    project's own venv is left as it was); the pack cache lives in its own HEXMCP_CACHE_DIR/start."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target",
                    str(target), str(PACK)], check=True, capture_output=True, timeout=240)
    cache = tmp_path_factory.mktemp("cache")
    start = Path(os.environ.get("HEXMCP_CACHE_DIR", Path.home() / ".cache" / "hexmcp"))
    (cache / "models").symlink_to(start / "models")  # the converted model, not converted again
    return {**os.environ, "PYTHONPATH": str(target), "HEXMCP_CACHE_DIR": str(cache), "HEXMCP_LOG_LEVEL": "warning"}


def test_its_flags_are_the_commands_flags(with_pack) -> None:
    out = subprocess.run([sys.executable, "-m", "hexmcp.app.cli", "serve", "--help"], env=with_pack,
                         capture_output=True, text=True, timeout=60)
    assert "dice tools:" in out.stdout and "--dice-sides" in out.stdout


@pytest.mark.anyio
async def test_its_tool_over_stdio(with_pack) -> None:
    params = StdioServerParameters(command=sys.executable, env=with_pack,
                                   args=["-m", "hexmcp.app.cli", "stdio", "--no-classifier", "--no-knowledge",
                                         "--dice-sides", "20"])
    async with stdio_client(params) as streams:
        async with ClientSession(*streams) as session:
            await session.initialize()
            assert "roll" in [tool.name for tool in (await session.list_tools()).tools]
            result = await session.call_tool("roll", {"times": 3})
            assert result.structured_content["sides"] == 20
            assert all(1 <= face <= 20 for face in result.structured_content["faces"])


@pytest.mark.anyio
async def test_its_tool_health_and_metric_over_http_rest_and_websocket(with_pack) -> None:
    port = free_port()
    argv = [sys.executable, "-m", "hexmcp.app.cli", "serve", "--no-classifier", "--no-knowledge", "--port", str(port)]
    with http_process(argv, port, env=with_pack) as served:
        answer = httpx.post(f"{served.base}/mcp/tools/call", json={"name": "roll", "arguments": {"times": 2}},
                            timeout=10).json()
        assert answer["structuredContent"]["sides"] == 6 and len(answer["structuredContent"]["faces"]) == 2
        async with streamable_http_client(f"{served.base}/mcp") as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                rolled = await session.call_tool("roll", {"times": 1})
                assert len(rolled.structured_content["faces"]) == 1
        async with McpClient(f"ws+chatgpt://127.0.0.1:{port}/ws") as client:
            rolled = await client.call_tool("roll", {"times": 3})
            assert len(rolled.structured_content["faces"]) == 3
        assert httpx.get(f"{served.base}/health", timeout=10).json()["dice"] == {"rolls": 6}
        assert "dice_rolls_total 6.0" in httpx.get(f"{served.base}/metrics", timeout=10).text
        assert served.terminate() == 0


@pytest.mark.anyio
async def test_its_switch_turns_it_off(with_pack) -> None:
    params = StdioServerParameters(command=sys.executable, env={**with_pack, "HEXMCP_NO_DICE": "1"},
                                   args=["-m", "hexmcp.app.cli", "stdio", "--no-classifier", "--no-knowledge"])
    async with stdio_client(params) as streams:
        async with ClientSession(*streams) as session:
            await session.initialize()
            assert "roll" not in [tool.name for tool in (await session.list_tools()).tools]
