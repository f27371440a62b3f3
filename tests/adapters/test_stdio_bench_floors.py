"""The stdio benchmark's floors answer what the orjson loop answers, and the benchmark's placement
sampling reads real CPUs (diary stdio.md, 2026-11-27)."""

from __future__ import annotations

import os
import sys

import orjson
import pytest

from bench.servers.orjson_stdio_loop import answer_line
from bench.stdio import REPO_ROOT, RawClient, last_cpu, sequential

pytestmark = pytest.mark.timeout(60)

FLOORS = ["bench.servers.orjson_stdio_loop", "bench.servers.asyncio_stdio_floor", "bench.servers.thread_stdio_floor"]


@pytest.mark.parametrize("module", FLOORS)
def test_each_floor_answers_the_ceilings_bytes_in_order_and_exits_at_eof(module: str) -> None:
    client = RawClient([sys.executable, "-m", module], tool="list_categories", arguments={})
    try:
        assert client.initialize()["result"]["protocolVersion"]
        requests = [client.call_request()[1] for _ in range(20)]
        for request in requests:  # pipelined: every answer in the order asked
            client.send(request)
        for request in requests:
            line = client.process.stdout.readline()  # type: ignore[union-attr]
            assert line == answer_line(orjson.loads(orjson.dumps(request)))
        run = sequential(client, 60)
        assert run.calls == 60 and run.same_cpu is not None and 0.0 <= run.same_cpu <= 1.0
    finally:
        client.close()
    assert client.process.returncode == 0


def test_last_cpu_names_one_of_this_process_cpus() -> None:
    assert last_cpu(os.getpid()) in os.sched_getaffinity(0)
    assert REPO_ROOT.joinpath("bench", "servers", "thread_stdio_floor.py").is_file()
