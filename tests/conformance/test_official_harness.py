"""The official MCP conformance harnesses against hexmcp's HTTP adapter (tests/conformance/everything_server.py).

`../shared/conformance/run_conformance.sh` installs the harnesses (npm) and Node 22 (PyPI) on first use
and runs them; every default leg must pass, and in `--suite all` only the tasks extension (which hexmcp
does not implement) may fail. Slow (a few minutes): it is real traffic through real clients.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.net import free_port

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(os.environ.get("HEXMCP_CONFORMANCE_RUNNER", ROOT.parent / "shared" / "conformance" / "run_conformance.sh"))
SERVER = Path(__file__).with_name("everything_server.py")
TASKS_EXTENSION_PREFIX = "tasks-"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1500),
    # Locally a missing runner skips; in CI (CI=true) it fails, so a missing harness can never pass as green.
    pytest.mark.skipif(not RUNNER.exists() and os.environ.get("CI") != "true",
                       reason=f"conformance runner not found at {RUNNER}"),
    pytest.mark.skipif(shutil.which("bash") is None or shutil.which("curl") is None, reason="needs bash and curl"),
]


def run_legs(tmp_path: Path, *legs: str, extra: tuple[str, ...] = ()) -> tuple[int, str, Path]:
    port = free_port()
    out = tmp_path / "conformance"
    start = f"{sys.executable} {SERVER} --port {port}"
    args = ["bash", str(RUNNER), "-o", str(out), "--start", start, *extra]
    for leg in legs:
        args += ["--leg", leg]
    args.append(f"http://127.0.0.1:{port}/mcp")
    done = subprocess.run(args, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=1400)
    report = done.stdout + done.stderr
    print(report)  # the summary lines belong in the CI log
    return done.returncode, report, out


def failing_scenarios(out: Path) -> dict[str, list[str]]:
    failing: dict[str, list[str]] = {}
    for summary in out.glob("*.json"):
        for scenario in json.loads(summary.read_text())["scenarios"]:
            if scenario["status"] == "FAIL":
                failing.setdefault(summary.stem, []).append(scenario["scenario"])
    return failing


def test_every_default_leg_passes(tmp_path: Path) -> None:
    code, report, out = run_legs(tmp_path, "0.1.13|", "0.2.0-alpha.12|", "0.2.0-alpha.12|--requirements 2026-07-28",
                                 "0.2.0-alpha.12|--spec-version 2025-11-25")
    assert code == 0, f"conformance legs failed: {failing_scenarios(out)}\n{report[-4000:]}"


def test_suite_all_fails_only_the_tasks_extension(tmp_path: Path) -> None:
    code, report, out = run_legs(tmp_path, "0.2.0-alpha.12|--suite all")
    failing = [name for names in failing_scenarios(out).values() for name in names]
    unexpected = [name for name in failing if not name.startswith(TASKS_EXTENSION_PREFIX)]
    assert not unexpected, f"--suite all: unexpected failures {unexpected}\n{report[-4000:]}"
