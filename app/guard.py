"""The flags of the audit trail and the rate limits (`serve` and `stdio`), and the observers they build.

Each observer is registered on the server by the composition root (`cli.py`), the audit first so that
the calls the rate limiter refuses are in the trail too.
"""

from __future__ import annotations

import argparse
import re
from typing import Any, Callable, Mapping

from hexmcp.core import McpServer

from hexmcp.adapters.limits import BucketRate, RateLimiter, RateLimits

_RATE = re.compile(r"^\s*(?P<rate>[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(?:/\s*(?P<unit>s|sec|second|m|min|minute|h|hour))?\s*$")
_UNIT_SECONDS = {None: 1.0, "s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0,
                 "h": 3600.0, "hour": 3600.0}


def parse_rate(text: str) -> float:
    """`5`, `5/s`, `120/min`, `0.5/s`: requests a second, above zero."""
    match = _RATE.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"a rate is N or N/s, N/min, N/h (N > 0), got {text!r}")
    rate = float(match["rate"]) / _UNIT_SECONDS[match["unit"]]
    if not rate > 0 or rate == float("inf"):
        raise argparse.ArgumentTypeError(f"a rate must be above zero, got {text!r}")
    return rate


def _at_least(minimum: int) -> Callable[[str], int]:
    """argparse type: a whole number no smaller than `minimum` (a burst of 0 would refuse everything)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


_burst = _at_least(1)


def parse_tool_rate(text: str) -> tuple[str, float, int | None]:
    """`NAME=RATE[:BURST]`, e.g. `list_categories=50/s:100`."""
    name, sep, spec = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=RATE[:BURST], got {text!r}")
    rate, _, burst = spec.partition(":")
    return name.strip(), parse_rate(rate), _burst(burst) if burst else None


def add_guard_arguments(parser: argparse.ArgumentParser) -> None:
    audit = parser.add_argument_group("audit trail (docs/operations.md: Audit log)")
    audit.add_argument("--audit-log", metavar="FILE",
                       help="append one JSON line per request (every method and transport), refusal, ended task "
                            "and /docs read to FILE")
    audit.add_argument("--audit-redact", action="append", default=[], metavar="FIELD",
                       help="also redact argument fields named FIELD, at any depth (repeatable; always redacted: "
                            "token, password, api_key, secret, authorization)")
    audit.add_argument("--audit-max-bytes", type=_at_least(1), default=None, metavar="BYTES",
                       help="rotate FILE to FILE.1 when it reaches BYTES (default: never)")
    audit.add_argument("--audit-backups", type=_at_least(1), default=5, metavar="N",
                       help="rotated files kept, FILE.1 to FILE.N (default 5; at least 1: a rotation never deletes "
                            "the lines it rotates away)")
    audit.add_argument("--audit-fsync", action="store_true",
                       help="fsync FILE after every line (no answered request's line is lost to a power cut; "
                            "one disk flush per request)")
    audit.add_argument("--audit-salt-file", metavar="FILE", default=None,
                       help="the secret salt of the client ids in the trail (default: FILE.salt beside the trail, "
                            "created if absent); $HEXMCP_AUDIT_SALT, if set, is the salt itself")
    limits = parser.add_argument_group("rate limits (docs/operations.md: Rate limits)")
    limits.add_argument("--rate-limit", type=parse_rate, default=None, metavar="RATE",
                        help="requests a second per client and transport (N, N/s, N/min, N/h; default: none)")
    limits.add_argument("--rate-burst", type=_burst, default=None, metavar="N",
                        help="requests a client may make at once before the rate applies (default: the rate, "
                             "at least 1)")
    limits.add_argument("--tool-rate-limit", action="append", default=[], type=parse_tool_rate,
                        metavar="NAME=RATE[:BURST]",
                        help="a tool's own limit, instead of --rate-limit for its calls (repeatable)")


class GuardSetupError(Exception):
    """A guard flag that cannot be honoured (an audit file that cannot be opened, a burst with no rate):
    start-up stops with this one line (exit 2)."""


def rate_limits(args: argparse.Namespace) -> RateLimits:
    """Raises GuardSetupError for a --rate-burst with no --rate-limit (a burst of what rate?)."""
    if args.rate_burst is not None and args.rate_limit is None:
        raise GuardSetupError("--rate-burst needs --rate-limit (the rate the burst refills at)")
    default = None
    if args.rate_limit is not None:
        default = BucketRate(rate=args.rate_limit, burst=args.rate_burst or _default_burst(args.rate_limit))
    tools = {name: BucketRate(rate=rate, burst=burst or _default_burst(rate))
             for name, rate, burst in args.tool_rate_limit}
    return RateLimits(default=default, tools=tools)


def _default_burst(rate: float) -> int:
    return max(1, round(rate))  # one second's worth


def install_guards(server: McpServer, args: argparse.Namespace,
                   versions: Callable[[], Mapping[str, Any]]) -> Callable[[], None]:
    """Register the audit log and the rate limiter `args` ask for; returns what closes them at exit."""
    closers: list[Callable[[], None]] = []
    if args.audit_log:
        from hexmcp.adapters.audit import AuditFile, AuditLog, ClientIds, Redaction, SaltError, deployment_salt

        try:
            file = AuditFile(args.audit_log, max_bytes=args.audit_max_bytes, backups=args.audit_backups,
                             fsync=args.audit_fsync)
        except OSError as error:
            raise GuardSetupError(f"cannot open the audit log {args.audit_log}: {error.strerror or error}") from None
        try:  # after the file: its folder exists now, for the default salt file beside it
            salt = deployment_salt(args.audit_salt_file or args.audit_log + ".salt")
        except SaltError as error:
            file.close()
            raise GuardSetupError(str(error)) from None
        audit = AuditLog(file, Redaction.with_defaults(args.audit_redact), versions, clients=ClientIds(salt))
        server.add_observer(audit)
        server.on_task_change(audit.task_changed)
        closers.append(audit.close)
    limits = rate_limits(args)
    if limits.active:
        server.add_observer(RateLimiter(limits))

    def close() -> None:
        for closer in closers:
            closer()

    return close


def audit_of(server: McpServer) -> Any:
    """The audit trail registered on `server`, or None: what the HTTP app tells about `/docs/` reads."""
    from hexmcp.adapters.audit import AuditLog

    return next((observer for observer in server.observers if isinstance(observer, AuditLog)), None)
