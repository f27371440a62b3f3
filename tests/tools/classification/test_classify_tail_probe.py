"""bench/classify_tail's probe on a real `hexmcp serve`: every classification gets its stages, in order.

The probe wraps uvicorn's protocol and request cycle and the inference pool; when a release moves what
it wraps, the records go missing or lose a stage, and this fails instead of the benchmark printing
nothing (or a wrong split).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys

import httpx
import pytest

from bench.classify_tail import PROBE, STAGES, queue_ahead
from tests.support.net import free_port
from tests.support.serve_process import ServeProcess

ORDER = ("arrived", "enqueued", "started", "ended", "resumed", "sent")
TEXTS = [f"What is {n} times {n + 1}?" for n in range(12)]


async def classify_all(base: str) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        return await asyncio.gather(*(client.post("/mcp/tools/call", json={"name": "classify_text",
                                                                           "arguments": {"text": t}})
                                      for t in TEXTS))


@pytest.mark.parametrize("precision", [[], ["--quantization", "fp32"]], ids=["int8", "fp32-batched"])
def test_probe_records_every_stage_of_every_classification_in_order(tmp_path, precision):
    out = tmp_path / "records.json"
    port = free_port()
    process = subprocess.Popen([sys.executable, str(PROBE), str(out), "serve", "--no-knowledge", "--port", str(port),
                                *precision],
                               stdout=subprocess.DEVNULL)
    served = ServeProcess(process, port)
    try:
        served.wait_healthy()
        answers = asyncio.run(classify_all(served.base))
        assert all(a.status_code == 200 and not a.json().get("isError") for a in answers)
        httpx.post(f"{served.base}/mcp/tools/call", json={"name": "list_categories", "arguments": {}}, timeout=10)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    data = json.loads(out.read_text())
    requests = data["requests"]
    assert len(requests) == len(TEXTS)  # classifications only: list_categories never reached the pool
    for record in requests:
        stamps = [record[stage] for stage in ORDER]
        assert stamps == sorted(stamps), record
        assert 0 < record["pass_cpu"] <= record["ended"] - record["started"] + 0.01
        assert 0 <= record["outstanding"] < len(TEXTS)
    if precision:  # fp32 batches: every request went through the probe's wrapper of the batch function
        assert all(1 <= record["batch"] <= len(TEXTS) for record in requests)
    assert {stage for pair in STAGES.values() for stage in pair} <= set(ORDER)
    assert all(len(c) == 4 and c[1] >= 0 and c[2] in (0, 1, 2) for c in data["collections"])

    ahead = queue_ahead(requests, workers=len({r["worker"] for r in requests}))
    for record in requests:
        terms = ahead[id(record)]
        # Only passes that ended while it waited count, so never more than the others, nor negative work.
        assert 0 <= terms["passes ahead"] < len(TEXTS) and terms["CPU ahead"] >= 0
