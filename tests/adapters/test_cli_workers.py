"""`hexmcp serve --workers N`: processes sharing one port, each answering, all stopped by one SIGTERM."""

from __future__ import annotations

import collections
import json
import os
import signal
import time

import httpx
import pytest

from hexmcp.core.startup import ExitCode

from ..support.serve_process import LIGHT, serve_process


def _pids_answering(base: str, at_least: int, timeout_s: float = 30.0) -> collections.Counter[int]:
    """Which processes answer /health, over fresh connections (each may land on any worker)."""
    seen: collections.Counter[int] = collections.Counter()
    deadline = time.monotonic() + timeout_s
    while len(seen) < at_least and time.monotonic() < deadline:
        with httpx.Client(base_url=base, timeout=5) as client:  # a new connection each round
            response = client.get("/health")
            if response.status_code == 200:
                seen[response.json()["pid"]] += 1
    return seen


@pytest.mark.timeout(120)
def test_two_workers_both_answer_and_one_sigterm_stops_them_all_with_status_0() -> None:
    with serve_process(*LIGHT, "--workers", "2") as served:
        seen = _pids_answering(served.base, at_least=2)
        assert len(seen) == 2, f"only {dict(seen)} answered"
        assert served.process.pid not in seen  # the supervisor itself never accepts
        # Both serve MCP too, not only /health.
        for _ in range(6):
            with httpx.Client(base_url=served.base, timeout=5) as client:
                assert client.post("/mcp/tools/list", json={}).status_code == 200
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=60) == ExitCode.OK
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{served.base}/health", timeout=2)
        for pid in seen:  # no worker outlives its supervisor
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)


@pytest.mark.timeout(120)
def test_one_line_says_where_the_workers_listen(tmp_path) -> None:
    with open(tmp_path / "stderr", "wb") as stderr, \
            serve_process(*LIGHT, "--workers", "2", env={"HEXMCP_LOG_LEVEL": "info"}, stderr=stderr) as served:
        assert len(_pids_answering(served.base, at_least=2)) == 2  # both are serving: both could have said it
        assert served.terminate() == ExitCode.OK
    events = [json.loads(line) for line in (tmp_path / "stderr").read_text().splitlines()]
    assert [event["url"] for event in events if event["event"] == "listening"] == [served.base]


@pytest.mark.timeout(120)
def test_a_worker_that_cannot_start_stops_the_others_and_its_status_is_the_supervisors(tmp_path) -> None:
    missing = tmp_path / "no-such-taxonomy.csv"
    with serve_process("--no-knowledge", "--taxonomy", str(missing), "--workers", "2", healthy=False) as served:
        assert served.process.wait(timeout=60) == ExitCode.USAGE


@pytest.mark.timeout(60)
def test_a_port_in_use_is_a_usage_error_named_on_stderr() -> None:
    with serve_process(*LIGHT) as first:
        with serve_process(*LIGHT, "--workers", "2", port=first.port, healthy=False) as second:
            assert second.process.wait(timeout=30) == ExitCode.USAGE


@pytest.mark.timeout(60)
def test_one_server_on_a_port_in_use_says_so_in_one_line_and_exits_as_a_usage_error(tmp_path) -> None:
    """Not uvicorn's own status 3, which is hexmcp's "model package missing" (core/startup.py)."""
    with serve_process(*LIGHT) as first, open(tmp_path / "stderr", "w+b") as stderr:
        with serve_process(*LIGHT, port=first.port, healthy=False, stderr=stderr) as second:
            assert second.process.wait(timeout=30) == ExitCode.USAGE
        stderr.seek(0)
        lines = stderr.read().decode().splitlines()
        assert f"hexmcp serve: cannot listen on 127.0.0.1:{first.port}: Address already in use" in lines
        assert first.health().status_code == 200  # the server already there is untouched
