"""The guard flags: rates as operators write them, and bad values stopping start-up with the reason."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest

from hexmcp.app import cli
from hexmcp.app.guard import parse_rate, parse_tool_rate, rate_limits
from hexmcp.adapters.limits import BucketRate
from hexmcp.core.startup import ExitCode

from ..support.wire import REPO_ROOT
from .guard_servers import stdio_command


@pytest.mark.parametrize(("text", "per_second"), [("5", 5.0), ("5/s", 5.0), ("120/min", 2.0), ("0.5/s", 0.5),
                                                   ("36/h", 0.01), (" 1e3 / s ", 1000.0)])
def test_rates_in_the_units_operators_write(text: str, per_second: float) -> None:
    assert parse_rate(text) == pytest.approx(per_second)


@pytest.mark.parametrize("text", ["0", "-1/s", "fast", "5/day", "", "inf"])
def test_a_rate_that_is_no_rate_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        parse_rate(text)


def test_tool_limits_and_the_default_burst() -> None:
    args = cli.parse_args(["stdio", "--rate-limit", "10/s", "--tool-rate-limit", "list_categories=50/s:100",
                           "--tool-rate-limit", "classify_text=0.5/s"])
    limits = rate_limits(args)
    assert limits.default == BucketRate(rate=10, burst=10)
    assert limits.tools == {"list_categories": BucketRate(rate=50, burst=100),
                            "classify_text": BucketRate(rate=0.5, burst=1)}
    assert parse_tool_rate("a=1:2") == ("a", 1.0, 2)
    with pytest.raises(argparse.ArgumentTypeError):
        parse_tool_rate("=1/s")


@pytest.mark.parametrize(("flags", "reason"), [
    (["--rate-burst", "0", "--rate-limit", "1"], "must be at least 1"),
    (["--tool-rate-limit", "listModels"], "NAME=RATE[:BURST]"),
    (["--audit-max-bytes", "0", "--audit-log", "x"], "must be at least 1"),
    (["--audit-backups", "0", "--audit-log", "x"], "must be at least 1"),
])
def test_bad_flag_values_are_usage_errors(flags: list[str], reason: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.parse_args(["serve", *flags])
    assert stopped.value.code == ExitCode.USAGE and reason in capsys.readouterr().err


@pytest.mark.parametrize(("flags", "reason"), [
    (["--audit-log", "/dev/null/audit.log"], "cannot open the audit log /dev/null/audit.log"),
    (["--rate-burst", "5"], "--rate-burst needs --rate-limit"),
])
def test_a_guard_that_cannot_be_set_up_stops_start_up(flags: list[str], reason: str, tmp_path: Path) -> None:
    done = subprocess.run(stdio_command(*flags), cwd=REPO_ROOT, input="", capture_output=True, text=True, timeout=60)
    assert done.returncode == ExitCode.USAGE and reason in done.stderr and done.stdout == ""
