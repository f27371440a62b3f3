"""`python -m tests.conformance.official [options] URL`: run the official harness against a server.

    python -m tests.conformance.official --start "python tests/conformance/everything_server.py --port 3001" \
        http://127.0.0.1:3001/mcp
    python -m tests.conformance.official --leg "0.2.0-alpha.12|--suite all" http://127.0.0.1:3001/mcp

Prints one summary line per leg and the first failing check of each failing scenario. Exit 0 when every
leg is ok, 1 when one is not, 2 when the harness or the server could not be set up.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from .harness import DEFAULT_LEGS, SUITE_ALL, HarnessSetupError, Leg, run_leg, wait_for


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.official", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("url", help="the server's Streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp")
    parser.add_argument("--leg", action="append", type=Leg.parse, metavar="VERSION|ARGS",
                        help="run this leg instead of the defaults (repeatable)")
    parser.add_argument("--suite-all", action="store_true", help=f"also run {SUITE_ALL.label}")
    parser.add_argument("--start", metavar="CMD", help="start the server with CMD first and stop it at the end")
    parser.add_argument("-o", "--out", type=Path, help="keep every leg's output here (default: a new temp dir)")
    parser.add_argument("--timeout-ms", type=int, help="per-scenario timeout for 0.2.x harnesses")
    args = parser.parse_args(argv)
    legs = list(args.leg or DEFAULT_LEGS) + ([SUITE_ALL] if args.suite_all else [])
    out = args.out or Path(tempfile.mkdtemp(prefix="hexmcp-conformance-"))
    server = subprocess.Popen(shlex.split(args.start), stdin=subprocess.DEVNULL) if args.start else None
    try:
        if not wait_for(args.url, server):
            print(f"conformance: no HTTP answer from {args.url}", file=sys.stderr)
            return 2
        results = [run_leg(leg, args.url, out, timeout_ms=args.timeout_ms) for leg in legs]
    except HarnessSetupError as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
    for result in results:
        print(result.summary())
    print(f"results: {out}")
    return 0 if all(result.ok for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
