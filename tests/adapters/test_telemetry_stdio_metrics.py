"""`hexmcp stdio --metrics-port`: the official SDK's stdio client drives the classifier and the knowledge
tools of a real process, and prometheus-client's own HTTP server on the side reports the operations on a
pipe, the stdio session, classifications per category, the inference pool and search times."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from hexmcp.core.startup import ExitCode

from ..support.net import free_port
from ..support.telemetry import HEXMCP, Scrape, scrape

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

OPERATION = "mcp_server_operation_duration_seconds_count"
TEXTS = ["Prove that the square root of two is irrational.", "Write a Python function that reverses a list.",
         "What is the capital of France?"]


def test_stdio_metrics_count_classifications_inference_and_searches(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "backup.md").write_text("# Backups\n\nCopy the database file while the server is stopped.\n")
    port = free_port()
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "hexmcp.app.cli", "stdio", "--docs", str(docs), "--log-level", "warning",
        "--metrics-port", str(port)])
    url = f"http://127.0.0.1:{port}/metrics"

    async def run() -> tuple[Scrape, list[str]]:
        async with stdio_client(params) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                categories = (await session.call_tool("list_categories", {})).structured_content["categories"]
                chosen = []
                for text in TEXTS:
                    result = await session.call_tool("classify_text", {"text": text})
                    assert not result.is_error, result
                    chosen.append(categories[result.structured_content["class"]])
                found = await session.call_tool("search", {"query": "how do I copy the database"})
                assert not found.is_error
                return await asyncio.to_thread(scrape, url), chosen

    metrics, chosen = asyncio.run(run())
    pipe = {"network_transport": "pipe", "mcp_method_name": "tools/call", "error_type": ""}
    assert metrics.value(OPERATION, **pipe, gen_ai_tool_name="classify_text") == len(TEXTS)
    assert metrics.value(OPERATION, **pipe, gen_ai_tool_name="search") == 1
    assert metrics.value("hexmcp_sessions_open", hexmcp_transport="stdio") == 1
    for category in set(chosen):
        assert metrics.value("hexmcp_classifications_total", category=category) == chosen.count(category)
    assert metrics.value("hexmcp_classifications_total") == len(TEXTS)
    assert metrics.value("hexmcp_inference_passes_total") >= len(TEXTS)
    assert metrics.value("hexmcp_inference_model_seconds_total") > 0
    assert metrics.value("hexmcp_inference_queue_depth") == 0 and metrics.value("hexmcp_inference_workers") >= 1
    assert metrics.value("hexmcp_knowledge_search_seconds_count", tool="search") == 1
    assert metrics.value("hexmcp_knowledge_search_seconds_sum", tool="search") > 0
    # The one document was looked up in the passage-vector cache once: embedded (miss) or reused (hit).
    lookups = [metrics.value("hexmcp_knowledge_vector_cache_lookups_total", result=r) for r in ("hit", "miss")]
    assert sum(lookups) == 1


def test_a_metrics_port_that_cannot_be_bound_stops_start_up_with_the_reason() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([*HEXMCP, "stdio", "--no-classifier", "--no-knowledge", "--metrics-port", str(port)],
                              input="", capture_output=True, text=True, timeout=60)
    assert done.returncode == ExitCode.USAGE and done.stdout == ""
    assert f"--metrics-port {port}" in done.stderr and "cannot listen" in done.stderr


@pytest.mark.parametrize("value", ["0", "65536", "http"])
def test_a_metrics_port_that_is_no_port_is_a_usage_error(value: str) -> None:
    done = subprocess.run([*HEXMCP, "stdio", "--metrics-port", value], input="", capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == ExitCode.USAGE and "--metrics-port" in done.stderr
