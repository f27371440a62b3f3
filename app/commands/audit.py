"""`hexmcp audit FILE`: read an audit trail back (rotated files too, oldest first), filtered.

Text by default (one line per call), or the records themselves as JSON lines with `--json`. Lines that
cannot be read (cut by a crash or a full disk) are reported on stderr with their file and line number,
and make the exit code 1: the trail is readable but not whole.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from hexmcp.core.startup import ExitCode

OUTCOMES = ("ok", "tool_error", "error", "cancelled")


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
    audit.add_argument("--json", action="store_true", help="print the matching records as JSON lines")


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
    wanted = AuditFilter(session=args.session, tool=args.tool, outcome=args.outcome, since=args.since,
                         until=args.until)
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


def _text(record: dict[str, Any]) -> str:
    code = f" {record['errorCode']}" if record.get("errorCode") else ""
    return (f"{record.get('time')}  {record.get('outcome')}{code}  {record.get('tool')}  "
            f"{record.get('durationMs')} ms  session={record.get('sessionId')}  client={record.get('client')}  "
            f"event={record.get('eventId')}")
