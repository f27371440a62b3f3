"""`hexmcp audit FILE`: read an audit trail back (rotated files too, oldest first), filtered.

Text by default (one line per record), or the records themselves as JSON lines with `--json`. Lines that
cannot be read (cut by a crash or a full disk) are reported on stderr with their file and line number,
and make the exit code 1: the trail is readable but not whole. `--replay EVENT` prints the JSON-RPC
request that line records, as the client sent it, ready to send again (exit 1 if the trail cannot
rebuild it: a secret was redacted, or a line of the old format kept only a digest).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from hexmcp.core.startup import ExitCode

OUTCOMES = ("ok", "tool_error", "error", "cancelled")
KINDS = ("request", "refusal", "task", "docs")


def add_audit_command(commands: Any) -> None:
    audit = commands.add_parser("audit", help="read an audit trail (--audit-log FILE), filtered",
                                description="read an audit trail (--audit-log FILE, and its rotated FILE.N), "
                                            "oldest first")
    audit.add_argument("file", metavar="FILE")
    audit.add_argument("--session", metavar="ID", help="only this sessionId")
    audit.add_argument("--tool", metavar="NAME", help="only calls of this tool")
    audit.add_argument("--since", type=_time, metavar="ISO", help="only calls at or after this time (UTC if no zone)")
    audit.add_argument("--until", type=_time, metavar="ISO", help="only calls before this time (UTC if no zone)")
    audit.add_argument("--outcome", choices=OUTCOMES, help="only calls that ended so")
    audit.add_argument("--method", metavar="METHOD", help="only requests of this MCP method (tools/call, resources/read...)")
    audit.add_argument("--kind", choices=KINDS, help="only lines of this kind")
    audit.add_argument("--json", action="store_true", help="print the matching records as JSON lines")
    audit.add_argument("--replay", metavar="EVENT", help="print the JSON-RPC request of the line with this eventId")


def _time(text: str) -> Any:
    from hexmcp.adapters.audit.reader import parse_time  # the reader is `hexmcp audit`'s alone, off the servers' start

    try:
        return parse_time(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r} (e.g. 2026-11-23T16:00:00Z)") from None


def run_audit(args: argparse.Namespace) -> int:
    from hexmcp.adapters.audit.reader import AuditFilter, BadLine, read_trail, trail_files

    if not trail_files(args.file):
        print(f"hexmcp audit: no audit log at {args.file}", file=sys.stderr)
        return ExitCode.USAGE
    if args.replay:
        return _replay(args.file, args.replay)
    wanted = AuditFilter(session=args.session, tool=args.tool, outcome=args.outcome, since=args.since,
                         until=args.until, method=args.method, kind=args.kind)
    bad = 0
    out = sys.stdout
    for entry in read_trail(args.file):
        if isinstance(entry, BadLine):
            bad += 1
            print(f"hexmcp audit: {entry.path}:{entry.line_number}: unreadable line ({entry.reason}, "
                  f"{entry.size} bytes)", file=sys.stderr)
            continue
        if wanted.accepts(entry):
            out.write(orjson.dumps(entry).decode() + "\n" if args.json else _text(entry) + "\n")
    out.flush()
    return 1 if bad else ExitCode.OK


def _replay(path: str, event_id: str) -> int:
    from hexmcp.adapters.audit.reader import BadLine, NotReplayable, read_trail, replay_request

    for entry in read_trail(path):
        if isinstance(entry, BadLine) or entry.get("eventId") != event_id:
            continue
        try:
            request = replay_request(entry)
        except NotReplayable as why:
            print(f"hexmcp audit: cannot replay: {why}", file=sys.stderr)
            return 1
        sys.stdout.write(orjson.dumps(request).decode() + "\n")
        return ExitCode.OK
    print(f"hexmcp audit: no line with eventId {event_id} in {path}", file=sys.stderr)
    return 1


def _text(record: dict[str, Any]) -> str:
    code = f" {record['errorCode']}" if record.get("errorCode") else ""
    method = record.get("method") or ("tools/call" if "schema" not in record else None)  # schema 1: tools/call only
    parts = (record.get("kind", "request"), method, record.get("target") or record.get("tool") or record.get("taskId")
             or record.get("path"))
    label = " ".join(str(part) for part in parts if part)
    return (f"{record.get('time')}  {record.get('outcome')}{code}  {label}  "
            f"{record.get('durationMs')} ms  session={record.get('sessionId')}  client={record.get('client')}  "
            f"event={record.get('eventId')}")
