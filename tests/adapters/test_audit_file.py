"""The audit file under stress: rotation, several writer processes at once, and `kill -9` in the middle
of a flood of tool calls through a real `hexmcp stdio`. Every line a reader finds must parse; a line cut
by the kill can only be the last one of the newest file, and the reader reports it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from hexmcp.adapters.audit import AuditFile
from hexmcp.adapters.audit.reader import BadLine, read_trail, trail_files
from hexmcp.adapters.audit.record import encode_line
from hexmcp.core import versions

from ..support.wire import REPO_ROOT
from .guard_servers import CHEAP_TOOL, stdio_command

pytestmark = pytest.mark.timeout(120)


def test_rotation_keeps_the_newest_lines_in_order_across_backups(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    file = AuditFile(path, max_bytes=2_000, backups=3)
    for number in range(400):
        file.append(encode_line({"n": number, "pad": "x" * 40}))
    file.close()
    files = trail_files(path)
    assert [f.name for f in files] == ["audit.log.3", "audit.log.2", "audit.log.1", "audit.log"]
    numbers = [entry["n"] for entry in read_trail(path)]  # type: ignore[index]
    assert numbers == list(range(numbers[0], 400))  # the oldest were rotated away; nothing in between lost
    assert all(f.stat().st_size <= 2_000 + 100 for f in files)


def test_backups_zero_is_refused_so_no_rotation_deletes_the_trail(tmp_path: Path) -> None:
    """Issue 30: with 0 backups a rotation unlinked the live file, and every line in it was gone."""
    with pytest.raises(ValueError, match="at least one audit backup"):
        AuditFile(tmp_path / "audit.log", max_bytes=500, backups=0)


def test_rotation_with_one_backup_keeps_the_lines_it_rotates_away(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    file = AuditFile(path, max_bytes=500, backups=1)
    for number in range(12):  # a little over one rotation's worth: nothing may be lost yet
        file.append(encode_line({"n": number, "pad": "x" * 30}))
    assert file.rotations == 1 and [f.name for f in trail_files(path)] == ["audit.log.1", "audit.log"]
    assert [entry["n"] for entry in read_trail(path)] == list(range(12))  # type: ignore[index]


def test_fsync_flushes_every_line_to_disk_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    quiet = AuditFile(tmp_path / "quiet.log")
    quiet.append(encode_line({"n": 0}))
    assert synced == []
    durable = AuditFile(tmp_path / "durable.log", fsync=True, max_bytes=40, backups=2)
    for number in range(3):  # across rotations: the reopened file is synced too
        durable.append(encode_line({"n": number, "pad": "x" * 20}))
    assert len(synced) == 3 and durable.rotations >= 1
    assert [entry["n"] for entry in read_trail(tmp_path / "durable.log")] == [0, 1, 2]  # type: ignore[index]


_WRITER = """
import sys
from hexmcp.adapters.audit import AuditFile
from hexmcp.adapters.audit.record import encode_line
name, path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
file = AuditFile(path, max_bytes=64 * 1024, backups=1000)
for n in range(count):
    file.append(encode_line({"writer": name, "n": n, "pad": "p" * (n % 700)}))
"""


def test_several_processes_append_and_rotate_without_losing_or_tearing_a_line(tmp_path: Path) -> None:
    path, count, writers = tmp_path / "audit.log", 3_000, ["a", "b", "c"]
    processes = [subprocess.Popen([sys.executable, "-c", _WRITER, name, str(path), str(count)], cwd=REPO_ROOT)
                 for name in writers]
    assert [p.wait(timeout=100) for p in processes] == [0, 0, 0]
    entries = list(read_trail(path))
    assert not [e for e in entries if isinstance(e, BadLine)]
    seen = sorted((e["writer"], e["n"]) for e in entries)  # type: ignore[index]
    assert seen == sorted((name, n) for name in writers for n in range(count))  # each line exactly once
    assert len(trail_files(path)) > 3  # rotation happened, many times, with three writers racing


def _flood(count: int) -> bytes:
    """A stdio session's bytes: initialize, then `count` tool calls with arguments big enough that lines
    cross page boundaries (where a kill can cut a write)."""
    messages = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": versions.LATEST_HANDSHAKE_VERSION, "capabilities": {},
                            "clientInfo": {"name": "flood", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    messages += [{"jsonrpc": "2.0", "id": n, "method": "tools/call",
                  "params": {"name": CHEAP_TOOL, "arguments": {"n": n, "text": "t" * (500 + 37 * (n % 150))}}}
                 for n in range(1, count + 1)]
    return b"".join(orjson.dumps(m) + b"\n" for m in messages)


@pytest.mark.parametrize("round_", range(3))
def test_kill_9_in_a_flood_leaves_only_whole_lines_or_one_reported_cut(tmp_path: Path, round_: int) -> None:
    path = tmp_path / "audit.log"
    process = subprocess.Popen(stdio_command("--audit-log", str(path), "--audit-max-bytes", "200000",
                                             "--audit-backups", "1000"),
                               cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    assert process.stdin is not None
    flood = _flood(20_000)
    writer = __import__("threading").Thread(target=_write_quietly, args=(process.stdin, flood), daemon=True)
    writer.start()
    deadline = time.monotonic() + 60
    while _trail_size(path) < 300_000 * (round_ + 1):  # well into the flood
        assert process.poll() is None and time.monotonic() < deadline, "the flood did not reach the audit log"
        time.sleep(0.005)
    process.kill()  # SIGKILL: no handler, no flush, whatever write is in progress is where it stops
    process.wait()
    entries = list(read_trail(path))
    bad = [e for e in entries if isinstance(e, BadLine)]
    records = [e for e in entries if not isinstance(e, BadLine)]
    assert len(records) > 100
    assert [r["method"] for r in records if r["method"] != "tools/call"] == ["initialize"]
    calls = [r for r in records if r["method"] == "tools/call"]
    assert all(r["tool"] == CHEAP_TOOL and r["params"]["arguments"]["n"] >= 1 for r in calls)
    assert len({r["eventId"] for r in records}) == len(records)
    newest = trail_files(path)[-1]
    assert all(b.reason == "no newline" and b.path == str(newest) for b in bad) and len(bad) <= 1
    # A writer that opens the file after the crash ends a cut line first, so its own lines stay whole.
    file = AuditFile(path)
    file.append(encode_line({"after": "restart"}))
    again = list(read_trail(path))
    assert again[-1] == {"after": "restart"}
    assert [e.reason for e in again if isinstance(e, BadLine)] == ["not a JSON object"] * len(bad)


def _trail_size(path: Path) -> int:
    """Bytes in the trail now; a file the server rotates away between the listing and its stat counts as
    gone (the listing races with rotation: the test's probe, not the server, must tolerate that)."""
    total = 0
    for file in trail_files(path):
        try:
            total += file.stat().st_size
        except FileNotFoundError:
            pass
    return total


def _write_quietly(pipe, data: bytes) -> None:
    try:
        pipe.write(data)
        pipe.close()
    except (BrokenPipeError, OSError):
        pass  # the server was killed mid-flood: that is the test


def test_a_cut_last_line_is_reported_then_closed_off_by_the_next_writer(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    whole = encode_line({"n": 1})
    path.write_bytes(whole + encode_line({"n": 2})[:5])  # what a kill between two pages leaves
    [first, cut] = list(read_trail(path))
    assert first == {"n": 1} and isinstance(cut, BadLine) and (cut.reason, cut.line_number) == ("no newline", 2)
    AuditFile(path).append(encode_line({"n": 3}))
    entries = list(read_trail(path))
    assert entries[0] == {"n": 1} and entries[2] == {"n": 3}
    assert isinstance(entries[1], BadLine) and entries[1].reason == "not a JSON object"


@pytest.mark.anyio
async def test_the_audit_fsync_flag_reaches_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hexmcp.app import cli
    from hexmcp.app.guard import install_guards
    from tests.fixtures.demo_server import build_demo_server

    from ..support.peer import CoreClient

    synced: list[int] = []
    monkeypatch.setenv("HEXMCP_AUDIT_SALT", "a-salt-given-by-the-environment")  # no salt file made (and synced)
    monkeypatch.setattr(os, "fsync", synced.append)
    args = cli.parse_args(["stdio", "--audit-log", str(tmp_path / "audit.log"), "--audit-fsync"])
    server = build_demo_server()
    close = install_guards(server, args, dict)
    client = CoreClient(server)
    await client.initialize()
    await client.ok("tools/call", {"name": "echo", "arguments": {"text": "durable"}})
    close()
    assert len(synced) == 2  # initialize's line, then the call's
