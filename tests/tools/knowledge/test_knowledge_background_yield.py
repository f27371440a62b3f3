"""Background work yields to the foreground (issue 31): passage embedding runs on threads below the server's
priority and waits while a foreground pass is queued or running; /health reports the background work
with its progress (kind, done/total, rate, ETA)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pytest

from hexmcp.app.compose import Composition
from hexmcp.core import McpServer
from hexmcp.core.pack import Pack
from hexmcp.tools.embedding.background_thread import BACKGROUND_NICE_INCREMENT, in_background, run_in_background
from hexmcp.tools.embedding.background_work import BackgroundWork
from hexmcp.tools.embedding.foreground_gate import FOREGROUND, MAX_WAIT_S, ForegroundGate
from hexmcp.tools.embedding.inference_pool import InferencePool
from hexmcp.tools.knowledge.corpus import CorpusSpec
from hexmcp.tools.knowledge.embedder import PassageEmbedder
from hexmcp.tools.knowledge.service import KnowledgeConfig, KnowledgeService

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")


def niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


class RecordingEncoder:
    """A stand-in for the MiniLM encoder: records, per pass, its thread's niceness and how many foreground
    passes were outstanding, and takes `seconds` per pass."""

    dimension = 4

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds
        self.passes: list[dict[str, Any]] = []

    def embed_one(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        self.passes.append({"text": text, "niceness": niceness(), "foreground": FOREGROUND.active,
                            "at": time.monotonic(), "background": in_background()})
        if self.seconds:
            time.sleep(self.seconds)
        vector = np.array([len(text), 1.0, 2.0, 3.0], dtype=np.float32)
        return vector, np.zeros((1, 8), dtype=np.float32)

    def embed_sentence(self, text: str) -> tuple[np.ndarray, int]:  # what passages run: the vector alone
        return self.embed_one(text)[0], len(text.split())


def test_an_idle_gate_lets_background_work_through_at_once() -> None:
    gate = ForegroundGate()
    started = time.monotonic()
    assert gate.wait_until_idle() == 0.0
    assert time.monotonic() - started < 0.01 and gate.waits == 0


def test_background_waits_for_the_foreground_and_resumes_when_it_ends() -> None:
    gate = ForegroundGate()
    gate.enter()
    waited: list[float] = []
    worker = threading.Thread(target=lambda: waited.append(gate.wait_until_idle(max_wait_s=5.0)))
    worker.start()
    time.sleep(0.15)
    assert not waited, "the background pass went ahead while a foreground pass was outstanding"
    gate.leave()
    worker.join(timeout=2)
    assert waited and 0.1 <= waited[0] < 1.0 and gate.waits == 1


def test_a_foreground_that_never_rests_slows_background_work_but_cannot_stop_it() -> None:
    gate = ForegroundGate()
    gate.enter()
    started = time.monotonic()
    gate.wait_until_idle(max_wait_s=0.1)
    assert 0.08 <= time.monotonic() - started < 1.0
    gate.leave()
    assert gate.active == 0


def test_every_classification_request_is_foreground_until_answered() -> None:
    gate = ForegroundGate()
    seen: list[int] = []
    pool = InferencePool(lambda item: seen.append(gate.active) or item, workers=1, max_queue=8, timeout=5, gate=gate)

    async def calls() -> list[Any]:
        return await asyncio.gather(*(pool.submit(n) for n in range(3)))

    try:
        assert asyncio.run(calls()) == [0, 1, 2]
    finally:
        pool.close()
    assert seen and all(active >= 1 for active in seen)
    assert gate.active == 0  # every request left the gate, the pool idles


@linux_only
def test_passage_workers_run_below_the_server_and_wait_for_the_foreground(monkeypatch) -> None:
    monkeypatch.setenv("HEXMCP_BACKGROUND_NICE", "10")
    encoder = RecordingEncoder()
    embedder = PassageEmbedder(encoder, "recording")
    mine = niceness()
    FOREGROUND.enter()
    try:
        pending = embedder.submit_many(["a passage"])
        time.sleep(MAX_WAIT_S / 2)
        assert encoder.passes == [], "a passage ran while a foreground pass was outstanding"
    finally:
        FOREGROUND.leave()
    vectors = pending.result()
    assert vectors.shape == (1, 4)
    (record,) = encoder.passes
    assert record["foreground"] == 0 and record["background"]
    assert record["niceness"] == min(19, mine + 10)
    assert niceness() == mine  # the caller's thread keeps its priority


def test_a_search_query_is_foreground_and_a_background_threads_query_is_not() -> None:
    encoder = RecordingEncoder()
    embedder = PassageEmbedder(encoder, "recording")
    embedder.embed("what is jest")
    assert encoder.passes[-1]["foreground"] == 1 and FOREGROUND.active == 0

    async def from_background() -> None:
        await run_in_background(embedder.embed, "a concept's query")

    asyncio.run(from_background())
    assert encoder.passes[-1]["foreground"] == 0 and encoder.passes[-1]["background"]


def test_a_background_failure_reaches_the_awaiting_caller() -> None:
    def fails() -> None:
        raise ValueError("the build broke")

    async def run() -> None:
        await run_in_background(fails)

    with pytest.raises(ValueError, match="the build broke"):
        asyncio.run(run())


def test_progress_counts_cached_units_as_done_but_not_in_the_rate() -> None:
    now = [100.0]
    work = BackgroundWork("indexing", 1000, clock=lambda: now[0])
    now[0] = 101.0
    work.advance(400, 0)  # handed back by the vector cache, all at once
    assert work.report()["rate_per_s"] is None and work.report()["eta_s"] is None
    now[0] = 111.0
    work.advance(100, 100)  # 100 embedded in the 10 s since
    report = work.report()
    assert report == {"kind": "indexing", "done": 500, "total": 1000, "unit": "passages", "rate_per_s": 10.0,
                      "eta_s": 50.0, "elapsed_s": 11.0}


class Reporting(Pack):
    def __init__(self, name: str, report: Mapping[str, Any]) -> None:
        self.name, self.report = name, report

    def health(self) -> Mapping[str, Any]:
        return self.report


def test_health_lists_the_background_work_of_every_pack() -> None:
    indexing = {"kind": "indexing", "done": 5, "total": 10}
    packs = [Reporting("knowledge", {"ready": True, "background": indexing}), Reporting("other", {"ready": True})]
    report = Composition(server=McpServer("t", "1"), packs=packs, command="serve").health()
    assert report["background"] == [indexing]
    assert report["knowledge"]["background"] == indexing
    idle = Composition(server=McpServer("t", "1"), packs=[Reporting("other", {"ready": True})], command="serve")
    assert idle.health()["background"] == []


def test_the_knowledge_service_reports_its_indexing_while_it_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HEXMCP_BACKGROUND_NICE", "7")
    corpus = tmp_path / "docs"
    corpus.mkdir()
    for number in range(12):
        (corpus / f"page{number}.md").write_text(f"# Page {number}\n\nParagraph {number} about testing.\n",
                                                 encoding="utf-8")
    encoder = RecordingEncoder(seconds=0.03)

    async def run() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        service = KnowledgeService(KnowledgeConfig(corpus=CorpusSpec(roots=[corpus]), cache_dir=tmp_path / "cache"))
        service._embedder = PassageEmbedder(encoder, "recording")  # the build keeps an embedder it finds
        build = asyncio.ensure_future(service.start())
        seen: list[dict[str, Any]] = []
        while not build.done():
            report = service.describe()
            if "background" in report:
                seen.append(report["background"])
            await asyncio.sleep(0.01)
        await build
        return seen, service.describe()

    seen, after = asyncio.run(run())
    assert seen, "/health never showed the indexing while it ran"
    assert {report["kind"] for report in seen} == {"indexing"} and {report["total"] for report in seen} == {12}
    assert any(report["done"] > 0 and report["rate_per_s"] and report["eta_s"] is not None for report in seen)
    assert "background" not in after and after["complete"]
    assert encoder.passes and all(p["background"] for p in encoder.passes)
    if sys.platform.startswith("linux"):  # the embedder's pool is made by the (lowered) build thread: lowered once
        assert {p["niceness"] for p in encoder.passes} == {min(19, niceness() + 7)}


@linux_only
@pytest.mark.parametrize(("setting", "expected"), [("0", 0), ("5", 5), ("junk", BACKGROUND_NICE_INCREMENT)])
def test_the_background_increment_can_be_set_where_the_cores_are_shared(monkeypatch, setting, expected) -> None:
    monkeypatch.setenv("HEXMCP_BACKGROUND_NICE", setting)
    embedder = PassageEmbedder(RecordingEncoder(), "recording")
    embedder.embed_many(["one passage"])
    assert embedder.encoder.passes[0]["niceness"] == min(19, niceness() + expected)
