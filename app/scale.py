"""`hexmcp serve` flags for running as part of a fleet: worker processes and the drain deadline."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from hexmcp.tools.flag_types import positive_int, positive_seconds

DEFAULT_DRAIN_TIMEOUT_S = 10.0
MAX_WORKERS = 256
"""Each worker loads its own model and index (~220 MiB): more than this is a typo, and `--workers 1e6`
started processes until the machine gave out."""


def worker_count(text: str) -> int:
    """argparse type for --workers: 1 to MAX_WORKERS."""
    value = positive_int(text)
    if value > MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_WORKERS} (each worker loads its own model), "
                                         f"got {value}")
    return value


def add_scale_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=worker_count, default=1, metavar="N",
                        help="server processes sharing the port (default 1); each loads its own model and index")
    parser.add_argument("--drain-timeout", type=positive_seconds, default=DEFAULT_DRAIN_TIMEOUT_S, metavar="SECONDS",
                        help="on SIGTERM, how long requests already received may run before they are cancelled "
                             f"(default {DEFAULT_DRAIN_TIMEOUT_S:g}); keep it below the orchestrator's grace period")


def run_workers_if_asked(args: argparse.Namespace, argv: list[str] | None) -> int | None:
    """The supervisor's exit status when `serve --workers N` (N > 1) asks for one, else None."""
    from .start.workers import is_worker, supervise

    if args.command != "serve" or args.workers <= 1 or is_worker():
        return None
    return supervise(args.host, args.port, args.workers, sys.argv[1:] if argv is None else argv,
                     auth_token=getattr(args, "auth_token", None) or None)


def listening_sockets() -> dict[str, Any]:
    """`run_http` keywords for a worker: serve on the socket its parent bound; the first worker alone says
    where it listens (the one line a single server logs), when it accepts, naming the routes it serves."""
    from .start.workers import inherited_listener, is_first_worker

    listener = inherited_listener()
    return {"sockets": [listener], "announce": is_first_worker()} if listener is not None else {}
