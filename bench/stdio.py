"""stdio benchmark: hexmcp against the official MCP Python SDK, same tool, same client, same run.

    python -m bench.stdio            # full run
    python -m bench.stdio --quick    # a few seconds

Both servers expose one trivial `echo` tool (bench/servers/). One raw client drives both: newline-
delimited JSON-RPC on the subprocess's pipes, timed with perf_counter per call. Measured:
  * sequential tools/call round trips (one in flight): calls/s, p50, p99;
  * pipelined round trips (a window of N in flight, default 64): calls/s, p50, p99;
  * cold start: spawn to the `initialize` answer, median over several starts, including
    `hexmcp stdio --no-classifier` and `hexmcp stdio` (whose embedding model must load lazily).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs

REPO_ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
SERVERS: dict[str, list[str]] = {
    "hexmcp": [PY, "-m", "bench.servers.hexmcp_echo"],
    "sdk": [PY, "-m", "bench.servers.sdk_echo"],
}
COLD_START: dict[str, list[str]] = {
    "hexmcp stdio --no-classifier": [PY, "-m", "hexmcp.adapters.cli", "stdio", "--no-classifier"],
    "hexmcp stdio (classifier)": [PY, "-m", "hexmcp.adapters.cli", "stdio"],
    "bench hexmcp echo": SERVERS["hexmcp"],
    "bench sdk echo": SERVERS["sdk"],
}
PROTOCOL_VERSION = "2025-11-25"  # the newest handshake version both servers speak
COLD_START_TARGET_S = 0.3
THROUGHPUT_TARGET_RATIO = 5.0


@attrs.frozen
class Run:
    calls: int
    seconds: float
    latencies: list[float]

    @property
    def rate(self) -> float:
        return self.calls / self.seconds

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class RawClient:
    """A subprocess speaking newline-delimited JSON-RPC; nothing but pipes and json."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        self._next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise EOFError("server closed stdout")
            message = json.loads(line)
            if "id" in message and "method" not in message:
                return message  # notifications (logs, list changes) are not what we time

    def initialize(self) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                   "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "0"}}})
        answer = self.receive()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def echo_request(self) -> tuple[int, dict[str, Any]]:
        self._next_id += 1
        return self._next_id, {"jsonrpc": "2.0", "id": self._next_id, "method": "tools/call",
                               "params": {"name": "echo", "arguments": {"text": "hello"}}}

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def sequential(client: RawClient, calls: int) -> Run:
    latencies = []
    started = time.perf_counter()
    for _ in range(calls):
        request_id, request = client.echo_request()
        sent = time.perf_counter()
        client.send(request)
        answer = client.receive()
        latencies.append(time.perf_counter() - sent)
        assert answer["id"] == request_id and "result" in answer, answer
    return Run(calls, time.perf_counter() - started, latencies)


def pipelined(client: RawClient, calls: int, window: int) -> Run:
    sent_at: dict[int, float] = {}
    latencies = []
    issued = 0
    started = time.perf_counter()

    def issue() -> None:
        nonlocal issued
        request_id, request = client.echo_request()
        sent_at[request_id] = time.perf_counter()
        client.send(request)
        issued += 1

    while issued < min(window, calls):
        issue()
    while len(latencies) < calls:
        answer = client.receive()
        assert "result" in answer, answer
        latencies.append(time.perf_counter() - sent_at.pop(answer["id"]))
        if issued < calls:
            issue()
    return Run(calls, time.perf_counter() - started, latencies)


def throughput(command: list[str], calls: int, window: int, warmup: int) -> tuple[Run, Run]:
    client = RawClient(command)
    try:
        client.initialize()
        sequential(client, warmup)
        return sequential(client, calls), pipelined(client, calls, window)
    finally:
        client.close()


def cold_start(command: list[str], starts: int) -> float | str:
    times = []
    for _ in range(starts):
        started = time.perf_counter()
        client = RawClient(command)
        try:
            answer = client.initialize()
        except (EOFError, ValueError) as exc:
            client.close()
            return f"failed ({type(exc).__name__})"
        times.append(time.perf_counter() - started)
        client.close()
        if "result" not in answer:
            return f"failed ({answer.get('error', {}).get('message', answer)})"
    return statistics.median(times)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="short run: fewer calls and starts")
    parser.add_argument("--calls", type=int, help="round trips per mode (default 5000, quick 500)")
    parser.add_argument("--window", type=int, default=64, help="requests in flight when pipelined")
    parser.add_argument("--starts", type=int, help="cold starts per server (default 10, quick 3)")
    args = parser.parse_args(argv)
    calls = args.calls or (500 if args.quick else 5000)
    starts = args.starts or (3 if args.quick else 10)

    results: dict[str, tuple[Run, Run]] = {}
    for name, command in SERVERS.items():
        results[name] = throughput(command, calls, args.window, warmup=max(50, calls // 10))

    print(f"\ntools/call echo over stdio: {calls} calls per mode, window {args.window}")
    print(f"{'server':<8} {'mode':<10} {'calls/s':>10} {'p50 ms':>8} {'p99 ms':>8}")
    for name, runs in results.items():
        for mode, run in zip(("sequential", "pipelined"), runs):
            print(f"{name:<8} {mode:<10} {run.rate:>10.0f} {ms(run.percentile(0.5)):>8} {ms(run.percentile(0.99)):>8}")
    for index, mode in enumerate(("sequential", "pipelined")):
        ratio = results["hexmcp"][index].rate / results["sdk"][index].rate
        verdict = "meets" if ratio >= THROUGHPUT_TARGET_RATIO else "misses"
        print(f"hexmcp / sdk, {mode}: {ratio:.1f}x ({verdict} the {THROUGHPUT_TARGET_RATIO:.0f}x target)")

    print(f"\ncold start to the initialize answer (median of {starts})")
    for name, command in COLD_START.items():
        median = cold_start(command, starts)
        if isinstance(median, str):
            print(f"{name:<32} {median}")
        else:
            target = " (target < 0.3 s: " + ("met)" if median < COLD_START_TARGET_S else "MISSED)") \
                if name.startswith("hexmcp stdio") else ""
            print(f"{name:<32} {median:.3f} s{target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
