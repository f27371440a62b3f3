"""A host may start `hexmcp serve` with stdout or stderr closed (a supervisor, `2>&-`): it must serve, not
die at its first log line with nothing said (exit 1 before `adapters/standard_fds.py`)."""

from __future__ import annotations

import sys

import httpx
import pytest

from tests.support.net import free_port
from tests.support.serve_process import LIGHT, http_process


@pytest.mark.parametrize("closed", ["2>&-", "1>&- 2>&-", "0<&- 1>&-"])
def test_serve_with_standard_fds_closed_serves_and_stops_cleanly(closed: str) -> None:
    port = free_port()
    argv = ["sh", "-c", f'exec "$@" {closed}', "sh", sys.executable, "-m", "hexmcp.app.cli", "serve", *LIGHT,
            "--port", str(port)]
    with http_process(argv, port) as served:
        listed = httpx.post(f"{served.base}/mcp/tools/list", json={}, timeout=10)
        assert listed.status_code == 200, listed.text
        assert served.terminate() == 0
