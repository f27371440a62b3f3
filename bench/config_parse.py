"""What the config layers add to a command's start: `cli.parse_args` with a config file and variables,
against the bare argparse parse it replaced (build the parser, parse the line), in the same run.

    python -m bench.config_parse [--rounds 200]

Prints the median of each, the difference and the ratio (ADR 0911's figures).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

import tomli_w

from hexmcp.app import cli
from hexmcp.app.config.layers import parse_with_config

ARGV = ["serve", "--port", "8091", "--no-classifier"]
DOCUMENT = {"log_level": "warning", "serve": {"docs": ["README.md"], "max_sessions": 100, "stateless": True},
            "gateway": {"url": "http://127.0.0.1:8000/v1", "retries": {"max": 2}},
            "upstream": [{"name": "kb", "target": "http://127.0.0.1:9000/mcp"}]}


def median_us(run: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=200)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as directory:
        config = Path(directory) / "hexmcp.toml"
        config.write_text(tomli_w.dumps(DOCUMENT), encoding="utf-8")
        env = {"HEXMCP_CONFIG": str(config), "HEXMCP_HEAD_TIMEOUT": "3"}
        bare = lambda: cli.build_parser().parse_known_args(ARGV)  # noqa: E731 - what parse_args did before
        layered = lambda: parse_with_config(cli.build_parser, ARGV, env)  # noqa: E731
        layered(), bare()  # warm: imports, the first parse of the upstream type
        results = {"bare argparse": [], "with config": []}
        for _ in range(5):  # interleaved, so a busy neighbour hits both alike
            results["bare argparse"].append(median_us(bare, rounds // 5))
            results["with config"].append(median_us(layered, rounds // 5))
    base, with_config = (statistics.median(results[name]) for name in ("bare argparse", "with config"))
    print(f"bare argparse parse: {base:8.0f} us (median)")
    print(f"with file + env:     {with_config:8.0f} us (median)  +{with_config - base:.0f} us, x{with_config / base:.2f}")


if __name__ == "__main__":
    main()
