"""What a start says on stderr: where it serves, in one line, and not the libraries' internals
(issue 28: a newcomer's first start printed ~40 lines of onnxruntime's quantiser and not its address)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.first_start import WarmCache
from tests.support.serve_process import LIGHT, serve_process

INFO = {"HEXMCP_LOG_LEVEL": "info"}
ENDPOINTS = ["/mcp", "/mcp/{method}", "/ws", "/health"]


def log_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_a_first_start_converts_the_model_in_a_handful_of_lines(warm_cache: WarmCache) -> None:
    lines = log_lines(warm_cache.first_start_log)
    assert "converting the weights to ONNX" in [line["event"] for line in lines]
    assert [line for line in lines if "logger" in line] == []  # only a library's records name their logger
    assert len(lines) <= 6, warm_cache.first_start_log


@pytest.mark.timeout(60)
def test_serve_says_where_it_listens_once_it_accepts(tmp_path: Path) -> None:
    with open(tmp_path / "stderr", "wb") as stderr, serve_process(*LIGHT, env=INFO, stderr=stderr) as served:
        assert served.terminate() == 0
    listening = [line for line in log_lines((tmp_path / "stderr").read_text()) if line["event"] == "listening"]
    assert len(listening) == 1
    assert listening[0]["url"] == served.base
    endpoints = listening[0]["endpoints"]
    assert [path for path in endpoints if path in ENDPOINTS] == ENDPOINTS, endpoints


def test_stdio_says_it_serves_on_stderr_and_writes_nothing_else_to_stdout() -> None:
    out = subprocess.run([sys.executable, "-m", "hexmcp.app.cli", "stdio", *LIGHT, "--log-level", "info"],
                         input=b"", capture_output=True, timeout=60, check=False)
    assert out.returncode == 0 and out.stdout == b""
    events = [line["event"] for line in log_lines(out.stderr.decode())]
    assert events.count("serving stdio") == 1 and events[0] == "serving stdio", events
