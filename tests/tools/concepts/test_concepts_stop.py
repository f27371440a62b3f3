"""Stopping a concept build mid-way (the server's SIGTERM cancels the task awaiting it): the build thread
cannot be killed and the interpreter waits for it at exit, so it must stop on its own at its next
checkpoint, in the step that relates concepts as in extraction (tests/tools/knowledge/
test_knowledge_long_work.py stops a real server during extraction)."""

from __future__ import annotations

import asyncio
import threading
import zlib
from types import SimpleNamespace

import numpy as np
import pytest

from hexmcp.tools.concepts import build
from hexmcp.tools.concepts.service import ConceptService
from hexmcp.tools.knowledge.chunking import chunk_document
from hexmcp.tools.knowledge.readers import parse_text

pytestmark = pytest.mark.timeout(60)
DIMENSION = 8
TERMS = ["cursor pagination", "rate limit", "session token", "index version", "passage vector", "tool pack"]


class HeldEmbedder:
    """Title vectors from a hash; the first call waits until the test lets it go, so a build is held in
    the step that relates concepts (draft_concepts embeds the titles it may merge)."""

    dimension = DIMENSION

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed_many(self, texts: list[str]) -> np.ndarray:
        self.entered.set()
        assert self.release.wait(30), "the test never released the embedder"
        rows = np.array([[(zlib.crc32(f"{t}{i}".encode()) % 1000) / 1000 for i in range(DIMENSION)] for t in texts],
                        dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


class StandInKnowledge:
    def __init__(self, embedder: HeldEmbedder) -> None:
        self.embedder = embedder
        documents = [parse_text(f"doc{n}.md", page(n), ".md") for n in range(12)]
        self._index = SimpleNamespace(documents={d.document_id: d for d in documents},
                                      passages=[p for d in documents for p in chunk_document(d)], version="v1",
                                      embed_query=None, nearest_passages=None)

    async def start(self) -> None:
        pass

    async def index(self):
        return self._index


def page(number: int) -> str:
    term, other = TERMS[number % len(TERMS)], TERMS[(number + 1) % len(TERMS)]
    return (f"# {term.title()}\n\nThe **{term}** is what page {number} explains; it works with the {other}.\n\n"
            f"## {other.title()}\n\nA **{other}** keeps the {term} in step.\n")


@pytest.mark.anyio
async def test_cancelling_a_build_while_it_relates_concepts_stops_its_thread(monkeypatch) -> None:
    related: list[str] = []
    graph = build._graph

    def spied_graph(*args, **kwargs):  # the last step of relating: reached only by a build that was not stopped
        related.append("graph")
        return graph(*args, **kwargs)

    monkeypatch.setattr(build, "_graph", spied_graph)
    embedder = HeldEmbedder()
    service = ConceptService(StandInKnowledge(embedder))
    others = set(threading.enumerate())  # other tests' services may still hold build threads of the same name
    building = asyncio.ensure_future(service.base())
    while not embedder.entered.is_set():
        await asyncio.sleep(0.01)
    assert service.background is not None and service.background.step == "relating concepts"
    [thread] = [t for t in threading.enumerate() if t.name == "hexmcp-concepts" and t not in others]
    building.cancel()  # what SIGTERM does to the start-up hook awaiting the build
    with pytest.raises(asyncio.CancelledError):
        await building
    embedder.release.set()
    # The service's next background job runs on the same thread once the stopped build has let go of it.
    assert await asyncio.wait_for(service.builds.run(threading.current_thread), 30) is thread
    assert related == [], "the build thread related every concept after it was told to stop"
    assert not service.ready
    service.builds.close()


@pytest.mark.anyio
async def test_a_build_left_alone_relates_its_concepts(monkeypatch) -> None:
    """The control: the same build, released at once, reaches the graph and serves."""
    embedder = HeldEmbedder()
    embedder.release.set()
    service = ConceptService(StandInKnowledge(embedder))
    base = await service.base()
    assert service.ready and base.stats.concepts > 0 and base.stats.edges > 0


def test_a_checkpoint_that_raises_stops_the_build_in_each_relating_step(monkeypatch) -> None:
    """Every step after extraction reaches a checkpoint: stopping at the k-th call, for each k, never
    returns a concept base, and the calls go on until the end of the build."""
    embedder = HeldEmbedder()
    embedder.release.set()
    knowledge = StandInKnowledge(embedder)
    index = knowledge._index

    def build_with(checkpoint):
        return build.build_concept_base(index.documents, index.passages, index.version, build.Glossary(),
                                        embed_many=embedder.embed_many, dimension=DIMENSION, checkpoint=checkpoint)

    calls = 0

    def count() -> None:
        nonlocal calls
        calls += 1

    build_with(count)
    documents = len(index.documents)
    assert calls > documents + 5  # one per document, then the relating steps'

    class Stop(Exception):
        pass

    for stop_at in range(documents + 1, calls + 1):
        seen = 0

        def stop() -> None:
            nonlocal seen
            seen += 1
            if seen == stop_at:
                raise Stop

        with pytest.raises(Stop):
            build_with(stop)
