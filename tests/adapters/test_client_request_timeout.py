"""`--client-request-timeout`: how long a question the server asks its client waits for the answer, on
`hexmcp stdio` (a real process, the official SDK client as a client that never answers) and `hexmcp serve`
(the HTTP adapter's `client_request_timeout_s`, which WebSocket follows)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from hexmcp.app.cli import parse_args
from hexmcp.app.serving import http_config

from ..support.hand_installed import pack_environment

PACK = Path(__file__).resolve().parents[1] / "fixtures" / "probe_pack" / "hexmcp_probe.py"
SERVE = [sys.executable, "-m", "hexmcp.app.cli", "stdio", "--no-classifier", "--no-knowledge"]


@pytest.fixture(scope="module")
def with_pack(tmp_path_factory) -> dict[str, str]:
    return pack_environment(tmp_path_factory.mktemp("probe"), PACK, "probe", "ProbePack")


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.anyio
async def test_stdio_ends_a_call_whose_question_is_not_answered_by_the_deadline(with_pack, tmp_path) -> None:
    async def never_answer(context):
        await anyio.sleep(3600)

    params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], "--client-request-timeout", "1"],
                                   env=with_pack)
    with open(tmp_path / "stderr", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as streams:
            async with ClientSession(*streams, list_roots_callback=never_answer) as session:
                await session.initialize()
                with anyio.fail_after(60):  # the default deadline (300 s) would trip this
                    result = await session.call_tool("count_roots", {})
    assert result.is_error
    assert "no answer to roots/list within 1 s" in result.content[0].text, result.content[0].text


@pytest.mark.parametrize("given", ["0", "-1", "inf", "nan", "soon"])
def test_a_deadline_that_is_not_a_positive_number_of_seconds_is_a_usage_error(given) -> None:
    done = subprocess.run([sys.executable, "-m", "hexmcp.app.cli", "stdio", "--client-request-timeout", given],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "--client-request-timeout: must be a positive number of seconds" in done.stderr, done.stderr


def test_serve_gives_the_deadline_to_the_http_adapter() -> None:
    assert http_config(parse_args(["serve"])).client_request_timeout_s == 300.0
    assert http_config(parse_args(["serve", "--client-request-timeout", "7.5"])).client_request_timeout_s == 7.5
