"""What metrics and tracing cost per call: `hexmcp stdio` with telemetry off, with --metrics-port, with
OTLP tracing (to a sink in this process that answers 200), with tracing sampled at 10 %, and with both,
same tool, same run.

    python -m bench.telemetry --quick

The servers stay up and the rounds are interleaved (bench.stdio's machinery), so a noisy neighbour hits
them alike; the ratios against "off" are the figures (ADR 0901, ADR 0902). Cold start (spawn to the
initialize answer) is measured too: tracing imports the SDK, and metrics prometheus-client.
"""

from __future__ import annotations

import argparse
import http.server
import socket
import sys
import threading
from typing import Any

from .stdio import HEXMCP_STDIO, MODES, Suite, cold_start, ms, run_suite


class _Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def servers(sink: str) -> dict[str, list[str]]:
    base = [*HEXMCP_STDIO, "--no-knowledge"]
    traced = ["env", f"OTEL_EXPORTER_OTLP_ENDPOINT={sink}"]
    sampled = [*traced, "OTEL_TRACES_SAMPLER=parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG=0.1"]
    return {"off": base, "metrics": [*base, "--metrics-port", str(_free_port())], "tracing": [*traced, *base],
            "trace 10%": [*sampled, *base], "both": [*traced, *base, "--metrics-port", str(_free_port())]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="short run: fewer calls and starts")
    parser.add_argument("--calls", type=int, help="round trips per mode and server (default 3000, quick 500)")
    parser.add_argument("--window", type=int, default=64, help="requests in flight when pipelined")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved batches per server")
    parser.add_argument("--starts", type=int, help="cold starts per server (default 7, quick 3)")
    args = parser.parse_args(argv)
    sink = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    commands = servers(f"http://127.0.0.1:{sink.server_address[1]}")
    suite = Suite(tool="list_categories", arguments={}, servers=commands, subject="both", reference="off")
    results = run_suite(suite, args.calls or (500 if args.quick else 3000), args.window, args.rounds)
    print(f"tools/call {suite.tool} over stdio; ratios against telemetry off, same run")
    print(f"{'server':<10} {'mode':<10} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'p50 ratio':>10} {'rate ratio':>10}")
    for name, runs in results.items():
        for index, (mode, run) in enumerate(zip(MODES, runs)):
            off = results["off"][index]
            print(f"{name:<10} {mode:<10} {run.rate:>9.0f} {ms(run.percentile(0.5)):>8} {ms(run.percentile(0.99)):>8} "
                  f"{run.percentile(0.5) / off.percentile(0.5):>10.2f} {run.rate / off.rate:>10.2f}")
    starts = args.starts or (3 if args.quick else 7)
    print(f"\ncold start to the initialize answer (median of {starts})")
    for name, command in servers(f"http://127.0.0.1:{sink.server_address[1]}").items():
        median = cold_start(command, starts)
        print(f"{name:<10} {median if isinstance(median, str) else f'{median:.3f} s'}")
    sink.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
