"""The per-session subscription caps are settings of `hexmcp serve` and `hexmcp stdio` (issue 30).

Before: `ServerOptions.max_subscriptions` and `max_uri_chars` bounded what one session may subscribe to,
but only code could set them; an operator had no flag, config key or variable. Now `--max-subscriptions`
and `--max-uri-chars` (so also `max_subscriptions` in a config file and `$HEXMCP_MAX_SUBSCRIPTIONS`) reach
the served server through the composition root: a server started with `--max-subscriptions 2` refuses the
third subscribe with -32600, keeps the two it took, and serves the session on.
"""

from __future__ import annotations

import pytest

from hexmcp.app import cli
from hexmcp.core import ServerOptions

from ..support.wire import StdioServer
from .guard_servers import serve, stdio_command
from .http_wire import Wire

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

FLAGS = ("--max-subscriptions", "2", "--max-uri-chars", "40")
LONG_URI = "hexmcp://" + "y" * 50  # 59 characters


def _check_refusals(answer) -> None:
    """`answer(method, params)` is the session's reply to one request."""
    assert answer("resources/subscribe", {"uri": "hexmcp://held/1"})["result"] == {}
    assert answer("resources/subscribe", {"uri": "hexmcp://held/2"})["result"] == {}
    error = answer("resources/subscribe", {"uri": "hexmcp://one-too-many"})["error"]
    assert error["code"] == -32600 and "Too many subscriptions" in error["message"] and error["data"]["limit"] == 2
    assert answer("resources/subscribe", {"uri": "hexmcp://held/1"})["result"] == {}  # one it holds: fine
    assert answer("resources/unsubscribe", {"uri": "hexmcp://held/2"})["result"] == {}
    error = answer("resources/subscribe", {"uri": LONG_URI})["error"]  # room now, but the URI is too long
    assert error["code"] == -32602 and "at most 40" in error["message"]
    assert answer("resources/subscribe", {"uri": "hexmcp://one-too-many"})["result"] == {}
    assert answer("ping", None)["result"] == {}


def test_stdio_started_with_max_subscriptions_2_refuses_the_third() -> None:
    server = StdioServer(stdio_command(*FLAGS))
    try:
        server.initialize()
        ids = iter(range(1, 100))
        _check_refusals(lambda method, params: server.request(next(ids), method, params))
        assert server.finish() == 0
    finally:
        server.kill()


def test_serve_started_with_max_subscriptions_2_refuses_the_third() -> None:
    with serve(*FLAGS) as base:
        wire = Wire(base)
        try:
            wire.initialize()
            _check_refusals(lambda method, params: wire.request(method, params)[1][0])
        finally:
            wire.close()


@pytest.mark.parametrize("command", ["serve", "stdio"])
def test_the_flags_default_to_the_servers_own_and_are_config_keys(command: str, monkeypatch, capsys) -> None:
    defaults = ServerOptions()
    args = cli.parse_args([command])
    assert (args.max_subscriptions, args.max_uri_chars) == (defaults.max_subscriptions, defaults.max_uri_chars)
    monkeypatch.setenv("HEXMCP_MAX_SUBSCRIPTIONS", "7")
    monkeypatch.setenv("HEXMCP_MAX_URI_CHARS", "300")
    args = cli.parse_args([command])
    assert (args.max_subscriptions, args.max_uri_chars) == (7, 300)
    with pytest.raises(SystemExit) as exit_info:
        cli.parse_args([command, "--max-subscriptions", "0"])
    assert exit_info.value.code == 2 and "--max-subscriptions" in capsys.readouterr().err
