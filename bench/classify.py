"""Latency, throughput and memory of ClassificationService.classify, against the bare forward pass.

    python -m bench.classify [--rounds 300] [--repeats 3] [--configs fp32:1,int8:1] [--prompts fixed|varied]
                             [--concurrent-requests 2400]

A configuration is `quantization:threads[:workers][@max_tokens]` (max_tokens: the classifier's token cap,
256 by default; `int8row:1,int8row:1@128` compares two caps in one run).

Each (quantization, threads) configuration runs in its own subprocess so its peak RSS is its own.
Per configuration:
- floor: the bare onnxruntime forward pass for the pre-tokenised query (what no wrapper can beat);
- single: one classify() at a time, awaited in sequence (p50/p99, throughput);
- 16x: 16 concurrent callers looping on classify() (p50/p99 per request, throughput), `--concurrent-requests`
  in all (2,400 by default: 1.5-2.5 s on the fixed prompt; the former 600 took under half a second, and one
  run's ratio swung by several percent with it).
Ratios: single p50 / floor p50 (target <= 1.3) and 16x throughput / single throughput (issue 31: >= 3,
with 16x p99 <= 50 ms). fp32 and int8row micro-batch concurrent requests (ADR 1201, 1203): `batch` is the
mean number of requests per pass at 16x. Besides the medians, each configuration's `runs:` line gives
every run's 16x / single ratio, 16x p99 and single p50, since the targets hold "in every run".
`--prompts varied`: the 16 callers cycle through the MMLU-Pro question stems (texts of every length, so
batches pad) instead of one fixed query.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from bench.http import varied_prompts
from bench.stats import percentile

QUERY = "How do I convert a list of strings to integers in Python quickly?"  # 12 words
CONCURRENCY = 16


async def measure(quantization: str, threads: int, rounds: int, varied: bool, workers: int | None = None,
                  concurrent_requests: int = 2400, max_tokens: int = 256) -> dict:
    from hexmcp.tools.classification import ClassificationConfig, ClassificationService

    service = ClassificationService.from_config(
        ClassificationConfig(quantization=quantization, threads=threads, workers=workers, max_tokens=max_tokens))
    started = time.perf_counter()
    await service.start()
    start_seconds = time.perf_counter() - started
    engine = service._engine  # the bench measures internals on purpose: the floor needs the session

    feed = engine.encoder.tokenize([QUERY])
    for _ in range(20):
        engine.encoder.forward(feed)
        await service.classify(QUERY)

    # Floor and single calls alternate round by round, so both see the same machine state (clock
    # speed, other load, caches warmed by the same surrounding work); measured in two separate loops
    # they drifted apart by as much as 40% between runs on this 2-core machine.
    floor = []
    single = []
    prompts = varied_prompts() if varied else [QUERY]  # single calls and 16x take turns through the same list
    for round_ in range(rounds):
        t0 = time.perf_counter()
        engine.encoder.forward(feed)
        floor.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await service.classify(prompts[round_ % len(prompts)])
        single.append(time.perf_counter() - t0)
    t_single = sum(single)

    concurrent: list[float] = []
    per_caller = max(1, concurrent_requests // CONCURRENCY)

    async def caller() -> None:
        for _ in range(per_caller):
            t0 = time.perf_counter()
            await service.classify(QUERY)
            concurrent.append(time.perf_counter() - t0)

    turn = iter(range(10**9))

    async def varied_caller() -> None:
        for _ in range(per_caller):
            text = prompts[next(turn) % len(prompts)]
            t0 = time.perf_counter()
            await service.classify(text)
            concurrent.append(time.perf_counter() - t0)

    completed_before, batches_before = service._pool.completed, service._pool.batches
    t_conc = time.perf_counter()
    await asyncio.gather(*((varied_caller if varied else caller)() for _ in range(CONCURRENCY)))
    t_conc = time.perf_counter() - t_conc
    completed = service._pool.completed - completed_before
    batch = completed / max(1, service._pool.batches - batches_before)
    workers = service._pool.workers
    await service.close()

    return {
        "quantization": quantization,
        "threads": threads,
        "start_s": start_seconds,
        "floor_p50_ms": 1000 * percentile(floor, 50),
        "single_p50_ms": 1000 * percentile(single, 50),
        "single_p99_ms": 1000 * percentile(single, 99),
        "single_qps": rounds / t_single,
        "conc_p50_ms": 1000 * percentile(concurrent, 50),
        "conc_p99_ms": 1000 * percentile(concurrent, 99),
        "conc_qps": len(concurrent) / t_conc,
        "workers": workers,
        "completed": completed,
        "batch": batch,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_child(quantization: str, threads: int, rounds: int, prompts: str, workers: int | None, concurrent_requests: int,
              max_tokens: int = 256) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "bench.classify", "--child", quantization, str(threads), "--rounds", str(rounds), "--prompts", prompts,
         "--concurrent-requests", str(concurrent_requests), "--max-tokens", str(max_tokens)]
        + (["--workers", str(workers)] if workers else []),
        check=True,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        cwd=Path(__file__).resolve().parents[1],
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3, help="runs per configuration; medians are shown")
    parser.add_argument("--configs", default="fp32:1,fp32:2,int8:1,int8:2", help="quantization:threads[:workers], comma-separated (workers: default one per core)")
    parser.add_argument("--prompts", choices=("fixed", "varied"), default="fixed", help="what the 16 callers send")
    parser.add_argument("--concurrent-requests", type=int, default=2400, help="requests in the 16x phase, all callers together")
    parser.add_argument("--child", nargs=2, metavar=("QUANT", "THREADS"), help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--max-tokens", type=int, default=256, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(measure(args.child[0], int(args.child[1]), args.rounds, args.prompts == "varied", args.workers,
                                             args.concurrent_requests, args.max_tokens))))
        return 0

    print(f"query: {QUERY!r} ({len(QUERY.split())} words); {args.rounds} rounds; {args.concurrent_requests} requests at 16x; "
          f"median of {args.repeats} runs")
    header = (
        f"{'quant':<7} {'thr':>3} | {'floor p50':>9} | {'single p50':>10} {'p99':>6} {'qps':>6} | "
        f"{'16x p50':>7} {'p99':>6} {'qps':>6} {'wkr':>3} {'batch':>5} | {'p50/floor':>9} {'16x/single':>10} | {'RSS MB':>6}"
    )
    print(header)
    print("-" * len(header))
    for config in args.configs.split(","):
        config, _, cap = config.partition("@")
        fields = config.split(":")
        quantization, threads = fields[0], int(fields[1])
        workers = int(fields[2]) if len(fields) > 2 else None
        max_tokens = int(cap) if cap else 256
        runs = [run_child(quantization, threads, args.rounds, args.prompts, workers, args.concurrent_requests, max_tokens)
                for _ in range(args.repeats)]
        if cap:
            quantization = f"{quantization}@{cap}"
        m = {key: sorted(r[key] for r in runs)[len(runs) // 2] for key in runs[0] if key != "quantization"}
        print(
            f"{quantization:<7} {threads:>3} | {m['floor_p50_ms']:>7.2f}ms | {m['single_p50_ms']:>8.2f}ms "
            f"{m['single_p99_ms']:>6.2f} {m['single_qps']:>6.0f} | {m['conc_p50_ms']:>7.2f} {m['conc_p99_ms']:>6.2f} "
            f"{m['conc_qps']:>6.0f} {m['workers']:>3.0f} {m['batch']:>5.1f} | {m['single_p50_ms'] / m['floor_p50_ms']:>9.2f} "
            f"{m['conc_qps'] / m['single_qps']:>10.2f} | {m['peak_rss_mb']:>6.0f}"
        )
        print("    runs: 16x/single " + " ".join(f"{r['conc_qps'] / r['single_qps']:.2f}" for r in runs)
              + "; 16x p99 " + " ".join(f"{r['conc_p99_ms']:.1f}" for r in runs)
              + "; single p50 " + " ".join(f"{r['single_p50_ms']:.2f}" for r in runs))
    print("times in ms; qps = classify calls per second; wkr = inference pool worker threads; batch = requests per pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
