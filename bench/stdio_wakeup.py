"""Where a sequential stdio round trip's time goes: the server's way of waiting for its next line.

    python -m bench.stdio_wakeup [--calls 3000] [--rounds 5] [--pin same|split|none]
    python -m bench.stdio_wakeup --product [--pin same|split|none]   # bench.stdio's list_categories servers

One blocking client (the shape of bench/stdio.py's: write a line, readline the answer) ping-pongs a
small line with one server process per waiting mode, interleaved round by round. Every server does the
same trivial work (echo the line); only how it waits for stdin differs:

  * `read`: a blocking `os.read` on stdin (what the orjson loop's readline does underneath);
  * `poll`, `epoll`: `select.poll` / `select.epoll` on stdin, then a read: the system call an event
    loop sleeps in, without the loop;
  * `uvloop`, `asyncio`: a read protocol on an event loop answering from the callback;
  * `uvloop+task`: the same with a task per line (the asyncio floor's shape);
  * `thread`: a blocking read in a second thread while the main thread sleeps in uvloop (a reader
    thread beside an event loop), answering from that thread.

For each it prints the median round trip and, from /proc, how often the server changed CPU per call
(`se.nr_migrations`) and its context switches. `--pin same` puts client and servers on one CPU,
`split` the client on CPU 0 and the servers on CPU 1: if `same` removes a gap that `none` shows, the
gap is where the scheduler places the woken server (a wake-up across virtual CPUs), not the server's
own work. `--product` does the same with bench.stdio's `list_categories` servers and client (the
orjson loop, the asyncio floor, `hexmcp stdio`; the SDK with `--sdk`) plus `thread floor`
(bench/servers/thread_stdio_floor.py: a blocking reader thread answering beside an idle uvloop), 4 KB
answers and real work.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from typing import Any

MODES = ("read", "poll", "epoll", "uvloop", "asyncio", "uvloop+task", "thread")
LINE = b'{"jsonrpc":"2.0","id":1,"result":{}}\n'


def serve(mode: str) -> None:
    fd_in, fd_out = 0, 1
    if mode == "read":
        while data := os.read(fd_in, 65536):
            os.write(fd_out, data)
    elif mode in ("poll", "epoll"):
        import select
        if mode == "poll":
            poller = select.poll()
            poller.register(fd_in, select.POLLIN)
            wait = poller.poll
        else:
            poller = select.epoll()
            poller.register(fd_in, select.EPOLLIN)
            wait = poller.poll
        while True:
            wait()
            data = os.read(fd_in, 65536)
            if not data:
                return
            os.write(fd_out, data)
    elif mode == "thread":
        import threading

        import uvloop

        async def main() -> None:
            import asyncio
            done = asyncio.get_running_loop().create_future()

            def reader() -> None:
                while data := os.read(fd_in, 65536):
                    os.write(fd_out, data)
                loop.call_soon_threadsafe(done.set_result, None)

            loop = asyncio.get_running_loop()
            threading.Thread(target=reader, daemon=True).start()
            await done
        uvloop.run(main())
    else:
        import asyncio

        class Echo(asyncio.Protocol):
            def __init__(self, out: asyncio.WriteTransport, done: asyncio.Future[None]) -> None:
                self.out, self.done = out, done

            def data_received(self, data: bytes) -> None:
                if mode == "uvloop+task":
                    asyncio.get_running_loop().create_task(self.answer(data))
                else:
                    self.out.write(data)

            async def answer(self, data: bytes) -> None:
                self.out.write(data)

            def connection_lost(self, exc: Exception | None) -> None:
                if not self.done.done():
                    self.done.set_result(None)

        async def main() -> None:
            loop = asyncio.get_running_loop()
            done = loop.create_future()
            out, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(fd_out, "wb", 0, closefd=False))
            await loop.connect_read_pipe(lambda: Echo(out, done), os.fdopen(fd_in, "rb", 0, closefd=False))
            await done

        if mode == "asyncio":
            asyncio.run(main())
        else:
            import uvloop
            uvloop.run(main())


def _sched(pid: int) -> dict[str, int]:
    """The server's migrations and context switches, summed over its threads."""
    totals = {"migrations": 0, "voluntary": 0, "involuntary": 0}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/sched") as sched:
            for row in sched:
                key, _, value = row.partition(":")
                key = key.strip()
                if key == "se.nr_migrations":
                    totals["migrations"] += int(value)
                elif key == "nr_voluntary_switches":
                    totals["voluntary"] += int(value)
                elif key == "nr_involuntary_switches":
                    totals["involuntary"] += int(value)
    return totals


def ping_pong(process: subprocess.Popen[bytes], calls: int) -> list[float]:
    write, read = os.write, process.stdout.readline  # type: ignore[union-attr]
    fd = process.stdin.fileno()  # type: ignore[union-attr]
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        write(fd, LINE)
        read()
        times.append(time.perf_counter() - started)
    return times


def _thread_cpu(pid: int) -> dict[int, int]:
    """Each thread's CPU time so far, in ns (/proc/<pid>/task/<tid>/schedstat)."""
    times = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as stat:
            times[int(tid)] = int(stat.read().split()[0])
    return times


def _answering_thread(client: Any) -> int:
    """The thread that does the work while calls are answered (the reader thread of a threaded floor, the
    event loop's thread of an asyncio server, not a start-up worker): the one busiest over a short warm-up."""
    before = _thread_cpu(client.process.pid)
    _sequential_placed(client, 300, answering=client.process.pid)
    after = _thread_cpu(client.process.pid)
    return max(after, key=lambda tid: after[tid] - before.get(tid, 0))


def _sequential_placed(client: Any, calls: int, event_loop_client: bool = False, *,
                       answering: int) -> tuple[Any, float]:
    """bench.stdio's sequential batch, plus the share of sampled calls on which the server had last run
    on the client's CPU. With `event_loop_client` the client sleeps in epoll_wait until the answer is
    readable (as a host's event loop does), then reads it."""
    import select

    from bench.stdio import Run, last_cpu

    me, server = os.getpid(), client.process.pid
    poller = select.epoll()
    poller.register(client.process.stdout.fileno(), select.EPOLLIN)
    wait = poller.poll if event_loop_client else (lambda: None)
    latencies, together, samples = [], 0, 0
    started = time.perf_counter()
    for index in range(calls):
        _, request = client.call_request()
        sent = time.perf_counter()
        client.send(request)
        wait()
        client.receive()
        latencies.append(time.perf_counter() - sent)
        if index % 50 == 0:
            samples += 1
            together += last_cpu(me) == last_cpu(server, answering)
    poller.close()
    return Run(calls, time.perf_counter() - started, latencies), together / samples


def product(placement: str, calls: int, rounds: int, with_sdk: bool, event_loop_client: bool) -> None:
    """bench.stdio's list_categories servers and client: a sequential batch on its own ("alone"), then
    one right after a pipelined batch ("after pipelined", bench.stdio's order), with how often the
    server sat on the client's CPU and its migrations per call."""
    from bench.quiet import wait_until_quiet
    from bench.stdio import SUITES, RawClient, pin, pipelined

    suite = SUITES["list_categories"]
    server_cpus = {"none": None, "same": {0}, "split": {1}}[placement]
    servers = {**suite.servers, "thread floor": [sys.executable, "-m", "bench.servers.thread_stdio_floor"]}
    clients = {}
    for name, command in servers.items():
        if name == "sdk" and not with_sdk:
            continue
        client = RawClient(command, suite.tool, suite.arguments)
        client.initialize()
        wait_until_quiet(client.process.pid)
        pin(client.process.pid, server_cpus)
        clients[name] = client, _answering_thread(client)
    phases = ("alone", "after pipelined")
    rates = {(name, phase): [] for name in clients for phase in phases}
    shares = {(name, phase): [] for name in clients for phase in phases}
    migrations = {(name, phase): 0.0 for name in clients for phase in phases}
    for _ in range(rounds):
        for name, (client, answering) in clients.items():
            for phase in phases:
                if phase == "after pipelined":
                    pipelined(client, calls, 64)
                before = _sched(client.process.pid)["migrations"]
                run, share = _sequential_placed(client, calls, event_loop_client, answering=answering)
                migrations[name, phase] += (_sched(client.process.pid)["migrations"] - before) / (calls * rounds)
                rates[name, phase].append(run.rate)
                shares[name, phase].append(share)
    for client, _ in clients.values():
        client.close()
    print(f"pin={placement}, {'event-loop' if event_loop_client else 'blocking'} client, list_categories, {rounds} rounds x {calls} sequential calls, medians of rounds")
    print(f"{'server':<14} {'sequential batch':<16} {'calls/s':>9} {'/ orjson loop':>14} {'same CPU':>9} {'migr/call':>10}")
    for phase in phases:
        ceiling = statistics.median(rates["orjson loop", phase])
        for name in clients:
            rate = statistics.median(rates[name, phase])
            print(f"{name:<14} {phase:<16} {rate:>9.0f} {rate / ceiling:>14.3f}"
                  f" {statistics.median(shares[name, phase]):>9.2f} {migrations[name, phase]:>10.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pin", choices=("none", "same", "split"), default="none")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--product", action="store_true", help="bench.stdio's list_categories servers instead")
    parser.add_argument("--sdk", action="store_true", help="with --product: the SDK server too")
    parser.add_argument("--event-loop-client", action="store_true",
                        help="with --product: the client waits in epoll_wait, as a host's event loop does")
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve)
        return 0
    server_cpus = {"none": None, "same": {0}, "split": {1}}[args.pin]
    if args.pin != "none":
        os.sched_setaffinity(0, {0})
    if args.product:
        product(args.pin, args.calls, args.rounds, args.sdk, args.event_loop_client)
        return 0
    servers = {}
    for mode in args.modes:
        process = subprocess.Popen([sys.executable, "-m", "bench.stdio_wakeup", "--serve", mode],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        ping_pong(process, 200)  # warm-up (and any thread the server starts exists by now)
        from bench.stdio import pin
        pin(process.pid, server_cpus)
        servers[mode] = process
    rounds: dict[str, list[float]] = {mode: [] for mode in servers}
    per_call: dict[str, dict[str, float]] = {mode: {"migrations": 0, "voluntary": 0, "involuntary": 0} for mode in servers}
    for _ in range(args.rounds):
        for mode, process in servers.items():
            before = _sched(process.pid)
            rounds[mode].append(statistics.median(ping_pong(process, args.calls)))
            after = _sched(process.pid)
            for key in per_call[mode]:
                per_call[mode][key] += (after[key] - before[key]) / (args.calls * args.rounds)
    for process in servers.values():
        process.stdin.close()  # type: ignore[union-attr]
        process.wait()
    print(f"pin={args.pin}, {args.rounds} rounds x {args.calls} sequential round trips, median of round medians")
    print(f"{'server waits in':<14} {'RTT p50 µs':>10} {'migr/call':>10} {'vol cs/call':>12} {'invol cs/call':>14}")
    for mode in servers:
        counts = per_call[mode]
        print(f"{mode:<14} {statistics.median(rounds[mode]) * 1e6:>10.1f} {counts['migrations']:>10.3f}"
              f" {counts['voluntary']:>12.2f} {counts['involuntary']:>14.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
