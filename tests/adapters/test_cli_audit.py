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
    (["--method", "tools/call"], ["ev-1", "ev-2", "ev-3", "ev-4"]),  # schema-1 lines: tool calls, requests
    (["--method", "ping"], []),
    (["--kind", "request"], ["ev-1", "ev-2", "ev-3", "ev-4"]),
    (["--kind", "refusal"], []),
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
    done = _audit(str(path), "--json", "--method", "tools/call")
    rest, http = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert (rest["transport"], http["transport"]) == ("rest", "http")
    # One configured token is one client, named by --auth-token-name (salted in the trail), never by the token.
    assert rest["client"] == http["client"] and rest["client"].startswith("token:")
    assert rest["params"]["arguments"] == {"customer": "[REDACTED]", "token": "[REDACTED]", "keep": 1}
    raw = path.read_text()
    assert "ACME" not in raw and "t0p" not in raw and "127.0.0.1" not in raw and "router-a" not in raw
    # The salt was made beside the trail, and a restart would salt alike.
    assert (tmp_path / "audit.log.salt").stat().st_mode & 0o777 == 0o600


def _stdio_lines(*messages: bytes) -> bytes:
    return b"".join(message + b"\n" for message in messages)


def test_hexmcp_stdio_logs_every_method_and_each_refused_line_and_replays_a_big_call(tmp_path: Path) -> None:
    """Issue 30 over stdio: lists, pings and refused lines (not JSON, over --max-message-bytes) left no line,
    and a call over 8 KiB kept only a digest."""
    from hexmcp.core import versions

    from .guard_servers import CHEAP_TOOL, stdio_command

    path = tmp_path / "audit.log"
    big = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
           "params": {"name": CHEAP_TOOL, "arguments": {"prompt": "p" * 30_000}}}
    wire = _stdio_lines(
        orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": versions.LATEST_HANDSHAKE_VERSION, "capabilities": {},
            "clientInfo": {"name": "audit", "version": "1"}}}),
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}',
        b"this is not json",
        b'{"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"pad": "' + b"x" * 70_000 + b'"}}',
        orjson.dumps(big),
        b'{"jsonrpc": "2.0", "id": 5, "method": "no/such/method"}',
    )
    done = subprocess.run(stdio_command("--audit-log", str(path), "--max-message-bytes", "65536"),
                          cwd=REPO_ROOT, input=wire, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    answers = [orjson.loads(line) for line in done.stdout.splitlines()]
    refused_events = {a["error"]["data"]["eventId"]: a["error"]["code"] for a in answers if "error" in a}
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    by_event = {line["eventId"]: line for line in lines}
    assert [line["method"] for line in lines if line["kind"] == "request"] == ["initialize", "tools/list", "tools/call"]
    assert len(refused_events) == 3 and set(refused_events) <= set(by_event)
    kinds = sorted((by_event[e]["errorCode"], by_event[e]["transport"]) for e in refused_events)
    assert kinds == [("method_not_found", "stdio"), ("parse_error", "stdio"), ("payload_too_large", "stdio")]
    [call] = [line for line in lines if line["method"] == "tools/call"]
    replay = _audit(str(path), "--replay", call["eventId"])
    assert replay.returncode == ExitCode.OK and orjson.loads(replay.stdout) == big


def test_backups_zero_and_an_unreplayable_line_are_refused_clearly(tmp_path: Path) -> None:
    from hexmcp.app import cli

    with pytest.raises(SystemExit) as stopped:
        cli.parse_args(["serve", "--audit-log", str(tmp_path / "a.log"), "--audit-backups", "0"])
    assert stopped.value.code == ExitCode.USAGE
    old = tmp_path / "old.log"  # a line of the first format, arguments over 8 KiB kept as a digest only
    old.write_bytes(encode_line({"time": "2026-11-23T10:00:00.000Z", "eventId": "ev-old", "tool": "classify_text",
                                 "arguments": {"omitted": "too large", "bytes": 9000, "digest": "sha256:00"}}))
    done = _audit(str(old), "--replay", "ev-old")
    assert done.returncode == 1 and "kept only a digest" in done.stderr
    missing = _audit(str(old), "--replay", "ev-none")
    assert missing.returncode == 1 and "no line with eventId ev-none" in missing.stderr
