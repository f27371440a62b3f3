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
from hexmcp.tools.embedding.background_thread import (BACKGROUND_NICE_INCREMENT, PASS_NICE_INCREMENT, BuildThread,
                                                      in_background)
from hexmcp.tools.embedding.background_work import BackgroundWork
from hexmcp.tools.embedding.foreground_gate import FOREGROUND, MAX_WAIT_S, ForegroundGate
from hexmcp.tools.embedding.inference_pool import InferencePool
from hexmcp.tools.knowledge.corpus import CorpusSpec
from hexmcp.tools.knowledge.embedder import PassageEmbedder
from hexmcp.tools.knowledge.service import KnowledgeConfig, KnowledgeService

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")


async def on_a_build_thread(function, *args):
    """`function(*args)` on a build thread of its own, closed after (as a service runs its background jobs)."""
    builds = BuildThread("hexmcp-test-build")
    try:
        return await builds.run(function, *args)
    finally:
        builds.close()


def niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


class RecordingEncoder:
    """A stand-in for the MiniLM encoder: records, per pass, its thread's niceness and how many foreground
    passes were outstanding, and takes `seconds` per pass."""

    dimension = 4

    def __init__(self, seconds: float = 0.0) -> None:
        from tokenizers import Tokenizer, models, pre_tokenizers

        self.seconds = seconds
        self.passes: list[dict[str, Any]] = []
        # Where a long passage's windows start (PassageEmbedder.token_offsets): words, as the passes count them.
        self.tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
        self.tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()

    def embed_sentence(self, text: str) -> tuple[np.ndarray, int]:
        self.passes.append({"text": text, "niceness": niceness(), "foreground": FOREGROUND.active,
                            "at": time.monotonic(), "background": in_background()})
        if self.seconds:
            time.sleep(self.seconds)
        return np.array([len(text), 1.0, 2.0, 3.0], dtype=np.float32), len(text.split())


def _background_pass(gate: ForegroundGate, **options: float) -> float:
    with gate.background_pass(**options) as waited:
        return waited


def test_an_idle_gate_lets_background_work_through_at_once() -> None:
    gate = ForegroundGate()
    started = time.monotonic()
    assert _background_pass(gate) < 0.01
    assert time.monotonic() - started < 0.01 and gate.waits == 0 and gate.held_back == 0


def test_background_waits_for_the_foreground_and_resumes_when_it_ends() -> None:
    gate = ForegroundGate()
    gate.enter()
    waited: list[float] = []
    worker = threading.Thread(target=lambda: waited.append(_background_pass(gate, max_wait_s=5.0)))
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
    _background_pass(gate, max_wait_s=0.1)
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
        await on_a_build_thread(embedder.embed, "a concept's query")

    asyncio.run(from_background())
    assert encoder.passes[-1]["foreground"] == 0 and encoder.passes[-1]["background"]


def test_a_background_failure_reaches_the_awaiting_caller() -> None:
    def fails() -> None:
        raise ValueError("the build broke")

    async def run() -> None:
        await on_a_build_thread(fails)

    with pytest.raises(ValueError, match="the build broke"):
        asyncio.run(run())


def test_a_build_thread_runs_every_build_on_one_background_thread_in_turn() -> None:
    """Builds that hand state on to each other run on one long-lived thread (its malloc arena reused: ADR 0615),
    one after another in the order asked, marked background, each failure delivered to its own caller."""
    builds = BuildThread("hexmcp-test-build")
    seen: list[tuple[int, threading.Thread, bool]] = []

    def build(n: int) -> int:
        seen.append((n, threading.current_thread(), in_background()))  # the object: an ident can be reused
        time.sleep(0.01)
        return n * 10

    def fails() -> None:
        raise ValueError("the build broke")

    async def run() -> list[int]:
        first = await builds.run(build, 0)
        results = await asyncio.gather(*(builds.run(build, n) for n in (1, 2, 3)))
        with pytest.raises(ValueError, match="the build broke"):
            await builds.run(fails)
        return [first, *results, await builds.run(build, 4)]

    try:
        assert asyncio.run(run()) == [0, 10, 20, 30, 40]
    finally:
        builds.close()
    assert [n for n, _, _ in seen] == [0, 1, 2, 3, 4]
    assert len({thread for _, thread, _ in seen}) == 1 and threading.current_thread() not in {t for _, t, _ in seen}
    assert all(background for _, _, background in seen)


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
@pytest.mark.parametrize(("setting", "expected"), [("0", 0), ("5", 5), ("junk", PASS_NICE_INCREMENT)])
def test_the_background_increment_can_be_set_where_the_cores_are_shared(monkeypatch, setting, expected) -> None:
    monkeypatch.setenv("HEXMCP_BACKGROUND_NICE", setting)
    embedder = PassageEmbedder(RecordingEncoder(), "recording")
    embedder.embed_many(["one passage"])
    assert embedder.encoder.passes[0]["niceness"] == min(19, niceness() + expected)


def test_a_core_stays_free_for_a_foreground_that_was_just_active() -> None:
    now = [100.0]
    gate = ForegroundGate(cores=2, recent_s=1.0, clock=lambda: now[0])
    assert gate.background_limit() == 2  # never active: every core indexes
    gate.enter()
    assert gate.background_limit() == 1
    gate.leave()
    assert gate.background_limit() == 1  # between two requests of a caller the core stays reserved
    now[0] += 1.0
    assert gate.background_limit() == 2  # quiet for recent_s: every core again
    assert ForegroundGate(cores=1).background_limit() == 1  # one core: the background still runs


def test_a_second_background_pass_waits_while_the_reserved_core_is_needed() -> None:
    gate = ForegroundGate(cores=2, recent_s=30.0)
    with gate.foreground():
        pass  # a request just ended: one core is kept for the next
    order: list[str] = []
    first_running, release_first = threading.Event(), threading.Event()

    def first() -> None:
        with gate.background_pass(max_wait_s=5.0):
            order.append("first starts")
            first_running.set()
            release_first.wait(5)
            order.append("first ends")

    def second() -> None:
        first_running.wait(5)
        with gate.background_pass(max_wait_s=5.0):
            order.append("second starts")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    first_running.wait(5)
    time.sleep(0.1)
    assert order == ["first starts"], "a second pass took the core kept for the foreground"
    release_first.set()
    for thread in threads:
        thread.join(5)
    assert order == ["first starts", "first ends", "second starts"]
    assert gate.held_back == 1 and gate.running == 0


def test_a_held_back_pass_still_runs_after_its_longest_wait() -> None:
    gate = ForegroundGate(cores=2, recent_s=30.0)
    gate.enter()
    gate.leave()
    with gate.background_pass(max_wait_s=5.0):
        started = time.monotonic()
        with gate.background_pass(max_wait_s=0.1) as waited:  # at the limit: waits, then goes anyway
            assert gate.running == 2
        assert waited >= 0.09 and time.monotonic() - started < 2.0
    assert gate.running == 0


def test_background_work_hands_the_gil_over_sooner_while_it_runs() -> None:
    from hexmcp.tools.embedding.gil_handoff import BACKGROUND_SWITCH_INTERVAL_S, background_jobs

    before = sys.getswitchinterval()
    seen: list[tuple[float, int]] = []

    async def run() -> None:
        await asyncio.gather(*(on_a_build_thread(lambda: seen.append((sys.getswitchinterval(), background_jobs())))
                               for _ in range(3)))

    asyncio.run(run())
    assert seen and all(interval == min(BACKGROUND_SWITCH_INTERVAL_S, before) and jobs >= 1 for interval, jobs in seen)
    assert sys.getswitchinterval() == before and background_jobs() == 0  # restored once the last job ended


def test_a_passage_vector_is_the_sentence_embedding_of_the_full_pass(embedder) -> None:
    """embed_sentence (what indexing and queries run) gives embed_one's vector: cached vectors stay valid."""
    encoder = embedder.encoder
    for text in ("what is a pod", "A Deployment provides declarative updates for Pods and ReplicaSets. " * 20):
        np.testing.assert_array_equal(encoder.embed_sentence(text)[0], encoder.embed_one(text)[0])


def test_partial_indexes_wait_while_requests_keep_coming_but_not_for_ever() -> None:
    from hexmcp.tools.knowledge.builder import _Publisher

    for busy, after_10_s in ((False, 1), (True, 0)):
        published: list[str] = []
        publisher = _Publisher(published.append, lambda final: "partial", foreground_busy=lambda: busy)
        publisher.last -= 10  # past the quiet interval (5 s), short of the busy one (30 s)
        publisher.maybe()
        assert len(published) == after_10_s
        publisher.last -= _Publisher.BUSY_INTERVAL_S
        publisher.maybe()
        assert len(published) == after_10_s + 1  # a foreground that never rests still sees new partial indexes
    publisher = _Publisher(published.append, lambda final: "first", foreground_busy=lambda: True)
    publisher.maybe(force=True)  # the first snapshot (what the cache held) is never held back
    assert published[-1] == "first"


def test_the_gate_says_busy_while_requests_keep_coming() -> None:
    now = [0.0]
    gate = ForegroundGate(cores=1, recent_s=1.0, clock=lambda: now[0])
    assert not gate.busy()
    with gate.foreground():
        assert gate.busy()
    now[0] += 0.5
    assert gate.busy()
    now[0] += 0.5
    assert not gate.busy()


@linux_only
def test_by_default_only_the_threads_that_run_passes_go_down(monkeypatch) -> None:
    monkeypatch.delenv("HEXMCP_BACKGROUND_NICE", raising=False)
    encoder = RecordingEncoder()
    embedder = PassageEmbedder(encoder, "recording")
    mine = niceness()

    async def build() -> int:
        def on_the_build_thread() -> int:
            embedder.embed_many(["a passage"])  # the pool is made here, by the build thread
            return niceness()
        return await on_a_build_thread(on_the_build_thread)

    assert asyncio.run(build()) == mine + BACKGROUND_NICE_INCREMENT  # the build thread: Python, holds the GIL
    assert encoder.passes[0]["niceness"] == min(19, mine + PASS_NICE_INCREMENT) and encoder.passes[0]["background"]
