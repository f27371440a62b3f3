"""`python -m tests.interop [--sdk-version V] [--transport stdio|http]`: the TypeScript SDK client's session
(ts_sdk_client.mjs) against a fresh `hexmcp stdio` and `hexmcp serve` over a small corpus, by hand, with
the SDK version the test pins or another one from 1.10 on (1.10.2 speaks 2024-11-05, 1.17.5 2025-06-18;
earlier ones lay their files out differently).

Prints each transport's steps and the verdict of the test's judge; exit 0 when every transport passes.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from tests.support.serve_process import serve_process

from .ts_client import SDK, drive, judge, sdk_modules, stdio_command, write_corpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.interop", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sdk-version", default=SDK[1], help=f"@modelcontextprotocol/sdk version (default {SDK[1]})")
    parser.add_argument("--transport", action="append", choices=("stdio", "http"),
                        help="the transports to drive (repeatable; default both)")
    args = parser.parse_args(argv)
    sdk = sdk_modules(args.sdk_version)
    corpus = write_corpus(Path(tempfile.mkdtemp(prefix="hexmcp-interop-")))
    failures = 0
    for transport in args.transport or ("stdio", "http"):
        if transport == "stdio":
            report = drive(sdk, transport="stdio", command=stdio_command(corpus))
        else:
            with serve_process("--docs", str(corpus)) as served:
                report = drive(sdk, transport="http", url=f"{served.base}/mcp")
        for name, step in report["steps"].items():
            print(f"{transport} {'ok ' if step['ok'] else 'ERR'} {name}: {json.dumps(step['detail'])[:160]}")
        try:
            judge(report)
            print(f"{transport}: SDK {args.sdk_version}: pass")
        except AssertionError as verdict:
            failures += 1
            print(f"{transport}: SDK {args.sdk_version}: FAIL {str(verdict)[:2000]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
