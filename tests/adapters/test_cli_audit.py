"""`hexmcp audit FILE`: the rotated files in order, the filters, --json, and what it says about bad lines."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from hexmcp.adapters.audit import AuditFile
from hexmcp.adapters.audit.record import encode_line
from hexmcp.core.startup import ExitCode

from ..support.wire import REPO_ROOT
from .guard_servers import HEXMCP

RECORDS = [
    {"time": "2026-11-23T10:00:00.000Z", "eventId": "ev-1", "sessionId": "s1", "tool": "classify_text", "outcome": "ok"},
    {"time": "2026-11-23T11:00:00.000Z", "eventId": "ev-2", "sessionId": "s2", "tool": "list_categories", "outcome": "ok"},
    {"time": "2026-11-23T12:00:00.000Z", "eventId": "ev-3", "sessionId": "s1", "tool": "classify_text",
     "outcome": "error", "errorCode": "rate_limited"},
    {"time": "2026-11-23T13:00:00.000Z", "eventId": "ev-4", "sessionId": "s2", "tool": "classify_text",
     "outcome": "tool_error"},
]


@pytest.fixture
def trail(tmp_path: Path) -> Path:
    path = tmp_path / "audit.log"
    file = AuditFile(path, max_bytes=150, backups=10)  # about one record a file: the reader must join them
    for record in RECORDS:
        file.append(encode_line(record))
    file.close()
    assert len(list(tmp_path.glob("audit.log.*"))) >= 2
    return path


def _audit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HEXMCP, "audit", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)


def _events(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [orjson.loads(line)["eventId"] for line in done.stdout.splitlines()]


@pytest.mark.parametrize(("flags", "expected"), [
    ([], ["ev-1", "ev-2", "ev-3", "ev-4"]),
    (["--session", "s1"], ["ev-1", "ev-3"]),
    (["--tool", "classify_text"], ["ev-1", "ev-3", "ev-4"]),
    (["--outcome", "error"], ["ev-3"]),
    (["--since", "2026-11-23T11:00:00Z"], ["ev-2", "ev-3", "ev-4"]),
    (["--until", "2026-11-23T12:00:00"], ["ev-1", "ev-2"]),  # no zone: UTC; until is exclusive
    (["--since", "2026-11-23T12:30:00+01:00", "--tool", "classify_text"], ["ev-3", "ev-4"]),
])
def test_filters_over_rotated_files_in_order(trail: Path, flags: list[str], expected: list[str]) -> None:
    done = _audit(str(trail), "--json", *flags)
    assert done.returncode == ExitCode.OK, done.stderr
    assert _events(done) == expected


def test_text_output_names_outcome_tool_and_event(trail: Path) -> None:
    done = _audit(str(trail), "--outcome", "error")
    assert done.returncode == ExitCode.OK
    [line] = done.stdout.splitlines()
    assert "error rate_limited" in line and "classify_text" in line and "event=ev-3" in line


def test_a_cut_line_is_reported_with_file_and_line_and_exit_1(trail: Path) -> None:
    with open(trail, "ab") as file:
        file.write(b'{"time": "2026-11-23T14:00')
    done = _audit(str(trail), "--json")
    assert done.returncode == 1 and _events(done) == ["ev-1", "ev-2", "ev-3", "ev-4"]
    assert f"{trail}:" in done.stderr and "no newline" in done.stderr


def test_a_missing_file_or_bad_time_is_a_usage_error(tmp_path: Path) -> None:
    missing = _audit(str(tmp_path / "nothing.log"))
    assert missing.returncode == ExitCode.USAGE and "no audit log" in missing.stderr
    bad_time = _audit(str(tmp_path / "nothing.log"), "--since", "yesterday")
    assert bad_time.returncode == ExitCode.USAGE and "not an ISO 8601 time" in bad_time.stderr


def test_hexmcp_serve_writes_a_line_per_call_on_each_transport(tmp_path: Path) -> None:
    import httpx

    from .guard_servers import CHEAP_TOOL, serve

    path = tmp_path / "audit.log"
    with serve("--audit-log", str(path), "--audit-redact", "customer", "--auth-token", "r",
               "--auth-token-name", "router-a") as base:
        call = {"name": CHEAP_TOOL, "arguments": {"customer": "ACME", "token": "t0p", "keep": 1}}
        assert httpx.post(base + "/mcp/tools/call", json=call, headers={"authorization": "Bearer r"}).status_code == 200
        listed = httpx.post(base + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call},
                            headers={"accept": "application/json, text/event-stream", "authorization": "Bearer r"})
        assert listed.status_code == 200
    done = _audit(str(path), "--json")
    rest, http = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert (rest["transport"], http["transport"]) == ("rest", "http")
    assert rest["client"] == http["client"] == "token:router-a"  # the configured token's name, never the token
    assert rest["arguments"] == {"customer": "[REDACTED]", "token": "[REDACTED]", "keep": 1}
    assert "ACME" not in path.read_text() and "t0p" not in path.read_text()
