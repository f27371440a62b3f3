"""Install what you use: on an environment without an extra (simulated by tests/fixtures/without, which
makes that extra's modules impossible to import), a feature that needs it says so in one line with the
pip command; a pack the settings merely leave on is served without, one they ask for stops start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hexmcp.core.startup import ExitCode

WITHOUT = Path(__file__).resolve().parents[1] / "fixtures" / "without"
HEXMCP = [sys.executable, "-m", "hexmcp.app.cli"]
pytestmark = pytest.mark.slow

INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
TOOLS = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})


def run(argv: list[str], without: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HEXMCP, *argv], input=stdin, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(WITHOUT), "HEXMCP_TEST_WITHOUT": without,
                               "HEXMCP_LOG_LEVEL": "warning", **env})


def test_a_pack_left_on_is_served_without_and_says_how_to_install_it() -> None:
    out = run(["stdio", "--no-classifier"], "markdown_it,aiohttp", stdin=f"{INITIALIZE}\n{TOOLS}\n")
    assert out.returncode == 0, out.stderr
    tools = {tool["name"] for tool in json.loads(out.stdout.splitlines()[1])["result"]["tools"]}
    assert "search" not in tools and "routeCompletion" not in tools and "resolveConcept" not in tools
    warnings = [json.loads(line)["event"] for line in out.stderr.splitlines() if "extra" in line]
    assert len(warnings) == 2, out.stderr  # knowledge and gateway; concepts need knowledge, so say nothing
    assert any("knowledge tools off" in line and "install 'hexmcp[knowledge]'" in line for line in warnings)
    assert any("gateway tools off" in line and "install 'hexmcp[gateway]'" in line for line in warnings)


def test_a_pack_the_settings_ask_for_stops_start_up_with_one_line(tmp_path: Path) -> None:
    out = run(["serve", "--no-classifier", "--docs", str(tmp_path)], "bm25s")
    assert out.returncode == ExitCode.USAGE
    assert out.stderr.strip().splitlines()[-1] == (
        f"hexmcp serve: the knowledge pack requires the 'knowledge' extra (no module named bm25s); "
        f"fix: {Path(sys.executable).with_name('pip')} install 'hexmcp[knowledge]'")


def test_the_client_commands_need_the_client_extra() -> None:
    out = run(["call", "http://127.0.0.1:9/mcp", "list_categories"], "aiohttp")
    assert out.returncode == ExitCode.USAGE
    assert out.stderr.strip() .startswith("hexmcp call: this command requires the 'client' extra (no module named "
                                          "aiohttp); fix: ")


def test_tracing_needs_the_otel_extra() -> None:
    out = run(["stdio", "--no-classifier", "--no-knowledge"], "opentelemetry",
              OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:4318", OTEL_SERVICE_NAME="hexmcp")
    assert out.returncode == ExitCode.USAGE, out.stderr
    assert "requires the 'otel' extra" in out.stderr and "install 'hexmcp[otel]'" in out.stderr
