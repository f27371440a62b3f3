"""Where one classify_text call's time goes, as floors no wrapper can beat (issues 14 and 17).

    python -m bench.classify_floors [--duration 4] [--rounds 3]      (needs wrk: apt-get install wrk)

In process (this interpreter, thread CPU time, medians; the machine is shared, and CPU time moves
less with others' load than wall time):
- the bare onnxruntime forward pass by token count (8 ... 128 tokens);
- one `engine.classify` on the fixed benchmark prompt: tokenizer + forward + pooling + head + router;
- the same through the inference pool on uvloop (`await pool.submit`): the hop to a worker and back.
Over the wire, `hexmcp serve` once warm (bench/warm.py), wrk at c1 and c16, rounds interleaved:
- the REST round trip of `list_categories` (the same route, adapter and encoder, no model): the floor
  the transport sets, back to back and with a 5 ms pause before each request (a lone caller's request
  finds the server idle, its caches cold and its cores asleep: that costs more than the call);
- `classify_text` on the fixed prompt, with the server's CPU per request split into the event-loop
  thread and the other threads (the inference workers), and the time its threads spent runnable but
  waiting for a core (/proc/PID/task/*/schedstat), so "slower than the model" splits into work done
  and cores not free.
Printed last: classify_text's c1 p50 against the sum of the floors (REST round trip + classify in
process); what is left is hand-offs and waiting for a core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from typing import Any, Callable

from bench.http import CLASSIFY_TEXT, classify_body, free_port, start, stop, wrk
from bench.warm import wait_warm

TOKEN_COUNTS = (8, 16, 32, 64, 128)
JSON = {"Content-Type": "application/json"}
# A lone caller's request finds the server idle: its event loop slept through the forward pass. The same
# trivial call with this pause before each request measures what waking an idle server costs.
PAUSE_MS = 5
IDLE_ARM = f"list_categories c1, {PAUSE_MS} ms apart"


def median_ms(run: Callable[[], Any], reps: int, clock: Callable[[], float] = time.thread_time) -> float:
    for _ in range(max(5, reps // 10)):  # warm-up
        run()
    samples = []
    for _ in range(reps):
        started = clock()
        run()
        samples.append(clock() - started)
    return statistics.median(samples) * 1e3


def in_process(reps: int) -> dict[str, float]:
    import numpy as np
    import uvloop

    from hexmcp.tools.classification import ClassificationConfig, ClassificationService

    service = ClassificationService.from_config(ClassificationConfig())
    asyncio.run(service.start())
    engine, pool = service._engine, service._pool  # noqa: SLF001 - a benchmark reaches in on purpose
    assert engine is not None and pool is not None
    encoder = engine.encoder
    figures: dict[str, float] = {}
    long_ids = encoder.tokenize_one(" ".join([CLASSIFY_TEXT] * 20))["input_ids"][0]
    for count in TOKEN_COUNTS:  # [CLS] + count - 2 word pieces + [SEP]
        ids = np.concatenate((long_ids[:count - 1], long_ids[-1:]))[None]
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        figures[f"forward {count} tokens"] = median_ms(lambda feed=feed: encoder.forward(feed), reps)
    prompt_tokens = encoder.tokenize_one(CLASSIFY_TEXT)["input_ids"].shape[1]
    figures[f"forward, the prompt ({prompt_tokens} tokens)"] = median_ms(
        lambda: encoder.forward(encoder.tokenize_one(CLASSIFY_TEXT)), reps)
    figures["classify in process, CPU"] = median_ms(lambda: engine.classify(CLASSIFY_TEXT), reps)
    figures["classify in process, wall"] = median_ms(lambda: engine.classify(CLASSIFY_TEXT), reps, time.perf_counter)

    async def through_pool() -> float:
        samples = []
        for index in range(reps + 20):
            started = time.perf_counter()
            await pool.submit(CLASSIFY_TEXT)
            if index >= 20:
                samples.append(time.perf_counter() - started)
        return statistics.median(samples) * 1e3

    figures["through the pool on uvloop, wall"] = uvloop.run(through_pool())
    service.shutdown()
    return figures


def thread_times(pid: int) -> dict[int, tuple[float, float]]:
    """tid -> (ms on a core, ms runnable but waiting for one) so far."""
    times = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            run_ns, wait_ns, _ = open(f"/proc/{pid}/task/{tid}/schedstat").read().split()
        except (FileNotFoundError, ValueError):
            continue
        times[int(tid)] = (int(run_ns) / 1e6, int(wait_ns) / 1e6)
    return times


def per_request(pid: int, before: dict[int, tuple[float, float]], requests: int) -> dict[str, float]:
    after = thread_times(pid)
    split = {"loop CPU": 0.0, "workers CPU": 0.0, "waiting for a core": 0.0}
    for tid, (run, wait) in after.items():
        run0, wait0 = before.get(tid, (0.0, 0.0))
        split["loop CPU" if tid == pid else "workers CPU"] += (run - run0) / requests
        split["waiting for a core"] += (wait - wait0) / requests
    return split


def over_the_wire(duration: float, rounds: int) -> dict[str, dict[str, float]]:
    port = free_port()
    process = start([sys.executable, "-m", "hexmcp.app.cli", "serve", "--port", str(port)], port,
                    ready_path="/health", timeout_s=180)
    try:
        print(f"hexmcp serve warm {wait_warm(process.pid, f'http://127.0.0.1:{port}'):.1f} s after /health said ok")
        url = f"http://127.0.0.1:{port}/mcp/tools/call"
        categories = {"name": "list_categories", "arguments": {}}
        arms = {"list_categories c1": (categories, 1, 0), IDLE_ARM: (categories, 1, PAUSE_MS),
                "classify_text c1": (classify_body(CLASSIFY_TEXT), 1, 0),
                "classify_text c16": (classify_body(CLASSIFY_TEXT), 16, 0)}
        runs: dict[str, list[dict[str, float]]] = {arm: [] for arm in arms}
        for _ in range(rounds):
            for arm, (body, connections, pause_ms) in arms.items():
                before = thread_times(process.pid)
                measured = wrk(url, body, JSON, connections, duration, pause_ms)
                # wrk's 1 s warm-up ran before `measured` and is counted in the CPU too: divide by both.
                total = measured["requests"] * (1 + 1 / duration)
                runs[arm].append({**measured, **per_request(process.pid, before, int(total))})
        return {arm: {key: (max if key == "p99_ms" else statistics.median)(r[key] for r in rs) for key in rs[0]}
                for arm, rs in runs.items()}
    finally:
        stop(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=4.0, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=300, help="in-process repetitions per figure")
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the service sets it for its own process
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    floors = in_process(args.reps)
    for name, value in floors.items():
        print(f"{name:<40}{value:>8.3f} ms")
    wire = over_the_wire(args.duration, args.rounds)
    print(f"{'over REST':<34}{'req/s':>8}{'p50 ms':>8}{'p99 ms':>8}{'loop CPU':>10}{'workers':>9}{'wait core':>10}  (ms/request)")
    for arm, row in wire.items():
        print(f"{arm:<34}{row['rps']:>8.0f}{row['p50_ms']:>8.2f}{row['p99_ms']:>8.2f}{row['loop CPU']:>10.3f}"
              f"{row['workers CPU']:>9.3f}{row['waiting for a core']:>10.3f}")
    rest = wire[IDLE_ARM]["p50_ms"]
    inside = floors["classify in process, wall"]
    c1 = wire["classify_text c1"]["p50_ms"]
    print(f"classify_text c1 p50 {c1:.2f} ms = REST floor on an idle server {rest:.2f} (back to back: "
          f"{wire['list_categories c1']['p50_ms']:.2f}) + classify in process {inside:.2f} + {c1 - rest - inside:.2f} ms "
          f"of hand-offs and waiting (pool hop in process: {floors['through the pool on uvloop, wall'] - inside:.2f} ms)")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
