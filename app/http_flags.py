"""`hexmcp serve`'s HTTP flags: where it listens, who may call it, and the limits that keep hostile
connections from locking others out."""

from __future__ import annotations

import argparse
import os

from hexmcp.tools.flag_types import positive_int, positive_seconds

from .scale import add_scale_arguments
from .serve_auth import add_serve_auth_flags


def add_http_flags(parser: argparse.ArgumentParser) -> None:
    env = os.environ.get
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1: local only)")
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--stateless", action="store_true",
                        help="no sessions: every POST stands alone, so instances can sit behind a plain load "
                             "balancer (set the same HEXMCP_STATE_SECRET on all of them)")
    parser.add_argument("--auth-token", default=env("HEXMCP_AUTH_TOKEN"),
                        help="require 'Authorization: Bearer T' (default: $HEXMCP_AUTH_TOKEN; /health stays open)")
    parser.add_argument("--allowed-origins", nargs="*", default=[], metavar="ORIGIN",
                        help="Origins accepted besides loopback ones (scheme://host[:port], a bare host, or *)")
    parser.add_argument("--allowed-hosts", nargs="*", default=[], metavar="HOST",
                        help="Host header values accepted besides loopback and the bound host (host[:port] or *)")
    parser.add_argument("--cors-origins", nargs="*", default=[], metavar="ORIGIN",
                        help="origins that get CORS headers (default: none, CORS off)")
    parser.add_argument("--max-body-bytes", type=int, default=4 * 1024 * 1024)
    parser.add_argument("--request-timeout", type=float, default=120.0, metavar="SECONDS")
    parser.add_argument("--body-timeout", type=float, default=30.0, metavar="SECONDS",
                        help="deadline for receiving a request body (408 beyond it; default 30)")
    parser.add_argument("--max-concurrent-requests", type=int, default=256)
    parser.add_argument("--max-sessions", type=int, default=10_000)
    parser.add_argument("--session-idle-timeout", type=float, default=1800.0, metavar="SECONDS")
    parser.add_argument("--head-timeout", type=positive_seconds, default=5.0, metavar="SECONDS",
                        help="close a connection whose request head is not complete within this (default 5)")
    parser.add_argument("--max-connections-per-address", type=positive_int, default=256, metavar="N",
                        help="open connections from one client IP; beyond it 503 + Retry-After (default 256)")
    parser.add_argument("--max-connections", type=positive_int, default=None, metavar="N",
                        help="open connections in total; beyond it 503 + Retry-After (default: the open-files "
                             "limit, raised to the hard limit at start-up, minus 256)")
    add_scale_arguments(parser)
    add_serve_auth_flags(parser)
