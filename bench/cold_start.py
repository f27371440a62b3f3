"""Cold start of `hexmcp stdio`: spawn to the `initialize` answer, beside the floors under it.

    python -m bench.cold_start                          # 15 rounds
    python -m bench.cold_start --rounds 5               # quicker
    python -m bench.cold_start --reference OTHER_PYTHON # also each hexmcp command on another install
                                                        # (e.g. main's venv, any version), as ratios

Every round starts each command once, in turn, so a busy neighbour on the machine slows them alike.
Per command: the median and the fastest wall time (perf_counter from spawn to the answer line), and
the CPU time the process had used when it answered (all its threads, from /proc; Linux only), which a
loaded machine inflates far less than wall time. The floors (bench/servers/start_floor.py) are the
interpreter with orjson and a blocking loop, then the same after importing the libraries hexmcp's core
cannot start without: what is left above the second floor is hexmcp's own start-up (ADR 0011).

Bytecode matters here: with PYTHONDONTWRITEBYTECODE set, an editable install recompiles every hexmcp
module on every start (a regular install has its bytecode from pip). The header says which applies.
So does the start-up code cache (attrs' generated methods, compiled once per machine: ADR 0013): one
untimed start of each hexmcp command before the rounds writes it, so the rounds measure every start but a
machine's first, and one more row measures `--no-classifier` with the cache off, which is what a first
start costs (plus writing the file).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

import attrs

from bench.stdio import COLD_START_TARGET_S, PY, RawClient
from hexmcp.app.start.code_cache import SWITCH_ENV, cache_file
from hexmcp.tools.cache_dir import default_cache_dir

ANCHORS: dict[str, list[str]] = {
    "floor: python + orjson loop": [PY, "-m", "bench.servers.start_floor"],
    "floor: + asyncio, uvloop, structlog, attrs, cattrs": [PY, "-m", "bench.servers.start_floor", "--libraries"],
    # hexmcp's core and stdio adapter serving no tools under the command's start-up block: what `hexmcp stdio`
    # costs above it is its command line and tools, the most deferring them could save (ADR 0013).
    "floor: + hexmcp core, stdio adapter, no tools": [PY, "-m", "bench.servers.core_floor"],
    # Not a floor: hexmcp's public API without the command's start-up block, so every attrs method is
    # compiled on every start (no code cache, collector running). It sits above `hexmcp stdio` (ADR 0013).
    "not a floor: bench echo server, no start-up block": [PY, "-m", "bench.servers.hexmcp_echo"],
}
VARIANTS: dict[str, list[str]] = {
    "hexmcp stdio --no-classifier": ["stdio", "--no-classifier"],
    "hexmcp stdio (classifier)": ["stdio"],
}
"""Arguments of the `hexmcp` command, run as a user runs it: the console script beside the interpreter (which
also runs a reference checkout whose command lives in another module)."""


def hexmcp_command(python: str) -> str:
    return str(Path(python).with_name("hexmcp"))


CODE_CACHE_OFF = {
    "hexmcp stdio --no-classifier, code cache off": ["env", f"{SWITCH_ENV}=0", hexmcp_command(PY),
                                                     *VARIANTS["hexmcp stdio --no-classifier"]],
}


@attrs.frozen
class Start:
    wall_s: float
    cpu_s: float | None


def process_cpu_s(pid: int) -> float | None:
    """CPU time used so far by every thread of `pid` (the first field of each thread's schedstat, in ns)."""
    total = 0
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for thread in threads:
        try:
            total += int(Path(f"/proc/{pid}/task/{thread}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended between the listing and the read
    return total / 1e9


def start_once(command: list[str]) -> Start:
    started = time.perf_counter()
    client = RawClient(command)
    try:
        answer = client.initialize()
        wall = time.perf_counter() - started
        cpu = process_cpu_s(client.process.pid)
    finally:
        client.close()
    if "result" not in answer:
        raise RuntimeError(f"{command}: initialize failed: {answer}")
    return Start(wall, cpu)


def bytecode_note() -> str:
    cli = importlib.util.find_spec("hexmcp.app.cli")
    origin = cli.origin if cli is not None and cli.origin else "?"
    cached = cli is not None and cli.cached is not None and Path(cli.cached).exists()
    writes = "not written (PYTHONDONTWRITEBYTECODE)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "written"
    return f"hexmcp from {Path(origin).parents[1]}; its bytecode is {'cached' if cached else 'NOT cached'}, new bytecode {writes}"


def code_cache_note() -> str:
    path = cache_file(default_cache_dir())
    state = f"{path.stat().st_size // 1024} KB" if path.exists() else "absent"
    return f"start-up code cache {path} ({state} after the warm-up starts)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15, help="starts of each command (default 15)")
    parser.add_argument("--reference", metavar="PYTHON",
                        help="another interpreter with hexmcp installed: its hexmcp commands run in the same rounds")
    args = parser.parse_args(argv)

    commands = dict(ANCHORS)
    commands.update({name: [hexmcp_command(PY), *tail] for name, tail in VARIANTS.items()})
    commands.update(CODE_CACHE_OFF)
    if args.reference:
        commands.update({f"reference: {name}": [hexmcp_command(args.reference), *tail]
                         for name, tail in VARIANTS.items()})
    for name in VARIANTS:  # untimed: writes the code cache if this machine has none yet
        start_once(commands[name])
    starts: dict[str, list[Start]] = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, command in commands.items():
            starts[name].append(start_once(command))

    print(f"cold start to the initialize answer, {args.rounds} rounds; {bytecode_note()}; {code_cache_note()}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'command':<52} {'wall median':>12} {'fastest':>8} {'cpu median':>11}")
    for name, runs in starts.items():
        wall = statistics.median(run.wall_s for run in runs)
        cpus = [run.cpu_s for run in runs if run.cpu_s is not None]
        cpu = f"{statistics.median(cpus) * 1000:.0f} ms" if cpus else "n/a"
        target = ""
        if name in VARIANTS:
            target = f"  (target < {COLD_START_TARGET_S * 1000:.0f} ms: {'met' if wall < COLD_START_TARGET_S else 'MISSED'})"
        print(f"{name:<52} {wall * 1000:>9.0f} ms {min(r.wall_s for r in runs) * 1000:>5.0f} ms {cpu:>11}{target}")
    paired("code cache on / off, --no-classifier", starts["hexmcp stdio --no-classifier"],
           starts["hexmcp stdio --no-classifier, code cache off"])
    if args.reference:
        for name in VARIANTS:
            paired(f"{name} / reference", starts[name], starts[f"reference: {name}"])
    return 0


def paired(label: str, ours: list[Start], theirs: list[Start]) -> None:
    """Median of the ratios of starts made in the same round: a busy neighbour slows both alike."""
    wall_ratio = statistics.median(a.wall_s / b.wall_s for a, b in zip(ours, theirs))
    cpu_pairs = [(a.cpu_s, b.cpu_s) for a, b in zip(ours, theirs) if a.cpu_s and b.cpu_s]
    cpu_ratio = f"{statistics.median(a / b for a, b in cpu_pairs):.3f}" if cpu_pairs else "n/a"
    print(f"{label}, median of paired ratios: wall {wall_ratio:.3f}, cpu {cpu_ratio}")


if __name__ == "__main__":
    sys.exit(main())
