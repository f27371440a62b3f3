"""stdio benchmark: hexmcp, the official MCP Python SDK and a no-MCP ceiling, same tool, same client, same run.

    python -m bench.stdio            # full run
    python -m bench.stdio --quick    # a few seconds

Two suites, each driven by one raw client (newline-delimited JSON-RPC on the subprocess's pipes, timed
with perf_counter per call):
  * `echo`: a trivial tool on hexmcp's public API vs the SDK (bench/servers/);
  * `list_categories`: the product, `hexmcp stdio`, answering its ~4 KB structured result, vs the SDK
    returning the same dict, vs the ceiling: a blocking stdin loop with orjson and no validation
    (bench/servers/orjson_stdio_loop.py), and the floor under any asyncio server: the ceiling's work on
    uvloop, stdin read by a protocol, each request in a task (bench/servers/asyncio_stdio_floor.py).
Before measuring, each server is left to finish its start-up work (`hexmcp stdio` loads the model, indexes
the knowledge corpus and extracts concepts in the background: bench/quiet.py). Within a suite every server
stays up and the rounds are interleaved (each round gives every server one
batch in turn), so a noisy neighbour on the machine hits them all alike. Measured:
  * sequential tools/call round trips (one in flight): calls/s, p50, p99;
  * pipelined round trips (a window of N in flight, default 64): calls/s, p50, p99;
  * ratios against the SDK and against the ceiling, with the targets of issue 14;
  * for sequential batches, the share of sampled calls on which client and server last ran on one CPU:
    a wake-up across a VM's virtual CPUs costs more than the server's whole call, so the sequential
    ratios follow where the scheduler left the processes (`--pin same|split` fixes it; diary stdio.md);
  * cold start: spawn to the `initialize` answer, median over several starts, including
    `hexmcp stdio --no-classifier` and `hexmcp stdio` (whose embedding model must load lazily).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs

from bench.quiet import wait_until_quiet
from bench.stats import percentile

REPO_ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
HEXMCP_STDIO = [PY, "-m", "hexmcp.app.cli", "stdio"]


@attrs.frozen(kw_only=True)
class Suite:
    """One tool called on several servers; `subject` is compared with `reference` and `ceiling`."""

    tool: str
    arguments: dict[str, Any]
    servers: dict[str, list[str]]
    subject: str
    reference: str
    ceiling: str | None = None
    floor: str | None = None  # the ceiling's work served the asyncio way: what no asyncio server goes under


SUITES: dict[str, Suite] = {
    "echo": Suite(tool="echo", arguments={"text": "hello"}, subject="hexmcp", reference="sdk", servers={
        "hexmcp": [PY, "-m", "bench.servers.hexmcp_echo"],
        "sdk": [PY, "-m", "bench.servers.sdk_echo"],
    }),
    "list_categories": Suite(tool="list_categories", arguments={}, subject="hexmcp stdio", reference="sdk",
                             ceiling="orjson loop", floor="asyncio floor", servers={
        "hexmcp stdio": HEXMCP_STDIO,
        "sdk": [PY, "-m", "bench.servers.sdk_list_categories"],
        "orjson loop": [PY, "-m", "bench.servers.orjson_stdio_loop"],
        "asyncio floor": [PY, "-m", "bench.servers.asyncio_stdio_floor"],
    }),
}
COLD_START: dict[str, list[str]] = {
    "hexmcp stdio --no-classifier": [*HEXMCP_STDIO, "--no-classifier"],
    "hexmcp stdio (classifier)": HEXMCP_STDIO,
    "bench hexmcp echo": SUITES["echo"].servers["hexmcp"],
    "bench sdk echo": SUITES["echo"].servers["sdk"],
}
PROTOCOL_VERSION = "2025-11-25"  # the newest handshake version both servers speak
COLD_START_TARGET_S = 0.25
REFERENCE_TARGET_RATIO = 5.0  # issue 14: at least 5x the SDK
CEILING_TARGET_RATIO = 0.5  # issue 14: at least half the blocking-loop ceiling
MODES = ("sequential", "pipelined")


@attrs.frozen
class Run:
    calls: int
    seconds: float
    latencies: list[float]
    same_cpu: float | None = None  # share of sampled calls with the server last run on the client's CPU

    @property
    def rate(self) -> float:
        return self.calls / self.seconds

    def percentile(self, q: float) -> float:
        return percentile(self.latencies, q * 100)


class RawClient:
    """A subprocess speaking newline-delimited JSON-RPC; nothing but pipes and json."""

    def __init__(self, command: list[str], tool: str = "echo", arguments: dict[str, Any] | None = None) -> None:
        self.tool, self.arguments = tool, arguments if arguments is not None else {"text": "hello"}
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

    def call_request(self) -> tuple[int, dict[str, Any]]:
        self._next_id += 1
        return self._next_id, {"jsonrpc": "2.0", "id": self._next_id, "method": "tools/call",
                               "params": {"name": self.tool, "arguments": self.arguments}}

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def last_cpu(pid: int, tid: int | None = None) -> int | None:
    """The CPU a process's main thread (or thread `tid`) last ran on (field 39 of stat(5)); None off Linux."""
    try:
        with open(f"/proc/{pid}/task/{tid or pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[36])
    except (OSError, IndexError, ValueError):
        return None


def sequential(client: RawClient, calls: int) -> Run:
    """One request in flight. Every 50th call also notes whether client and server last ran on one CPU:
    on a VM a wake-up across virtual CPUs costs tens of µs, so a sequential rate means little without
    it (diary stdio.md, 2026-11-27)."""
    latencies = []
    together = samples = 0
    me, server = os.getpid(), client.process.pid
    started = time.perf_counter()
    for index in range(calls):
        request_id, request = client.call_request()
        sent = time.perf_counter()
        client.send(request)
        answer = client.receive()
        latencies.append(time.perf_counter() - sent)
        assert answer["id"] == request_id and "result" in answer and not answer["result"].get("isError"), answer
        if index % 50 == 0:
            mine, theirs = last_cpu(me), last_cpu(server)
            if mine is not None and theirs is not None:
                samples += 1
                together += mine == theirs
    return Run(calls, time.perf_counter() - started, latencies, together / samples if samples else None)


def pipelined(client: RawClient, calls: int, window: int) -> Run:
    sent_at: dict[int, float] = {}
    latencies = []
    issued = 0
    started = time.perf_counter()

    def issue() -> None:
        nonlocal issued
        request_id, request = client.call_request()
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


def merge(runs: list[Run]) -> Run:
    shares = [r.same_cpu for r in runs if r.same_cpu is not None]
    return Run(sum(r.calls for r in runs), sum(r.seconds for r in runs), [x for r in runs for x in r.latencies],
               statistics.fmean(shares) if shares else None)


def pin(pid: int, cpus: set[int] | None) -> None:
    """Put every thread of a process on `cpus` (threads it starts later inherit it from their creator)."""
    if cpus is not None:
        for tid in os.listdir(f"/proc/{pid}/task"):
            os.sched_setaffinity(int(tid), cpus)


def run_suite(suite: Suite, calls: int, window: int, rounds: int,
              server_cpus: set[int] | None = None) -> dict[str, tuple[Run, Run]]:
    """Every server up at once; each round gives each one a sequential and a pipelined batch in turn."""
    clients = {name: RawClient(command, suite.tool, suite.arguments) for name, command in suite.servers.items()}
    for client in clients.values():
        pin(client.process.pid, server_cpus)
    batch = max(1, calls // rounds)
    runs: dict[str, tuple[list[Run], list[Run]]] = {name: ([], []) for name in clients}
    try:
        for client in clients.values():
            client.initialize()
            sequential(client, max(50, calls // 10))  # warm-up
        for name, client in clients.items():
            waited = wait_until_quiet(client.process.pid)
            if waited > 1:
                print(f"  ({name}: start-up work done after {waited:.1f} s more)", file=sys.stderr)
        for _ in range(rounds):
            for name, client in clients.items():
                runs[name][0].append(sequential(client, batch))
                runs[name][1].append(pipelined(client, batch, window))
    finally:
        for client in clients.values():
            client.close()
    return {name: (merge(seq), merge(pipe)) for name, (seq, pipe) in runs.items()}


def report_suite(title: str, suite: Suite, results: dict[str, tuple[Run, Run]]) -> None:
    print(f"\n{title}: tools/call {suite.tool} over stdio")
    print(f"{'server':<14} {'mode':<10} {'calls/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'same CPU':>9}")
    for name, runs in results.items():
        for mode, run in zip(MODES, runs):
            share = "" if run.same_cpu is None else f"{run.same_cpu:.2f}"
            print(f"{name:<14} {mode:<10} {run.rate:>10.0f} {ms(run.percentile(0.5)):>8} {ms(run.percentile(0.99)):>8}"
                  f" {share:>9}")
    for index, mode in enumerate(MODES):
        subject = results[suite.subject][index].rate
        ratio = subject / results[suite.reference][index].rate
        verdict = "meets" if ratio >= REFERENCE_TARGET_RATIO else "misses"
        line = f"{suite.subject} / {suite.reference}, {mode}: {ratio:.2f}x ({verdict} the {REFERENCE_TARGET_RATIO:g}x target)"
        if suite.ceiling is not None:
            share = subject / results[suite.ceiling][index].rate
            verdict = "meets" if share >= CEILING_TARGET_RATIO else "misses"
            line += f"; / {suite.ceiling}: {share:.3f} ({verdict} the {CEILING_TARGET_RATIO:g} target)"
        print(line)
        if suite.floor is not None and suite.ceiling is not None:
            floor = results[suite.floor][index].rate
            print(f"  {suite.floor} / {suite.ceiling}, {mode}: {floor / results[suite.ceiling][index].rate:.3f}; "
                  f"{suite.subject} / {suite.floor}: {subject / floor:.3f}")


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
    parser.add_argument("--rounds", type=int, default=5, help="interleaved batches per server")
    parser.add_argument("--suite", action="append", choices=list(SUITES), help="run only this suite (repeatable)")
    parser.add_argument("--starts", type=int, help="cold starts per server (default 10, quick 3)")
    parser.add_argument("--pin", choices=("none", "same", "split"), default="none",
                        help="same: client and servers on CPU 0; split: client on 0, servers on 1 (default: the "
                             "scheduler places them, and says where in the 'same CPU' column)")
    args = parser.parse_args(argv)
    calls = args.calls or (500 if args.quick else 5000)
    starts = args.starts or (3 if args.quick else 10)

    server_cpus = {"none": None, "same": {0}, "split": {1}}[args.pin]
    if server_cpus is not None:
        os.sched_setaffinity(0, {0})
        print(f"pinned: client on CPU 0, servers on CPU {min(server_cpus)}")
    for title in args.suite or list(SUITES):
        suite = SUITES[title]
        report_suite(title, suite, run_suite(suite, calls, args.window, args.rounds, server_cpus))

    print(f"\ncold start to the initialize answer (median of {starts})")
    for name, command in COLD_START.items():
        median = cold_start(command, starts)
        if isinstance(median, str):
            print(f"{name:<32} {median}")
        else:
            target = f" (target < {COLD_START_TARGET_S} s: " + ("met)" if median < COLD_START_TARGET_S else "MISSED)") \
                if name.startswith("hexmcp stdio") else ""
            print(f"{name:<32} {median:.3f} s{target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
