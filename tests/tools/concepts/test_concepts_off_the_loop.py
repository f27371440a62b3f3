"""CPU-heavy tool work runs off the event loop: pings sent while a 100,000-character linkEntities is being
worked on are answered before it (issue 30: they once waited for the whole scan); search and searchPassages
are checked by the thread their index work runs on.

A real `hexmcp serve` over the concept test corpus, spoken to over the REST dialect on two connections.
The check is an ordering (how many pings came back before the linkEntities answer), not a timing threshold.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from hexmcp.tools.knowledge import mcp_tools as knowledge_tools
from tests.support.docs_server import serve_docs
from tests.tools.concepts.conftest import write_corpus

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

JSON = {"content-type": "application/json"}
# Every few words a mention: the most work a text of the maximum length can ask of the linker.
LONG_TEXT = ("Take a snapshot of the state file; the WAL keeps the write-ahead log. " * 2000)[:100_000]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, concepts_cache: Path, embedder) -> Iterator[str]:
    with serve_docs(write_corpus(tmp_path_factory.mktemp("concepts-corpus")), concepts_cache) as base:
        yield base


async def _pings_while(base: str, heavy: dict) -> tuple[int, dict]:
    """Send `heavy`, then ping on another connection, one ping after the other, until its answer is in:
    how many pings were answered before it, and its answer."""
    async with httpx.AsyncClient(base_url=base, timeout=60) as one, httpx.AsyncClient(base_url=base, timeout=60) as two:
        assert (await two.post("/mcp/ping", headers=JSON)).status_code == 200  # connected before the race
        warm = {"name": "linkEntities", "arguments": {"text": "snapshot"}}  # the concept base is built by now
        assert (await one.post("/mcp/tools/call", json=warm, headers=JSON)).status_code == 200
        heavy_call = asyncio.ensure_future(one.post("/mcp/tools/call", json=heavy, headers=JSON))
        await asyncio.sleep(0.02)  # the 100 kB body reaches the server and its scan starts
        answered = 0
        while not heavy_call.done():
            response = await two.post("/mcp/ping", headers=JSON)
            assert response.status_code == 200 and response.json() == {}
            answered += not heavy_call.done()  # a ping that came back while the scan was still running
        heavy_answer = await heavy_call
    assert heavy_answer.status_code == 200, heavy_answer.text
    return answered, heavy_answer.json()


def test_pings_during_a_long_link_entities_are_answered_while_it_runs(server: str) -> None:
    # minConfidence 1: the whole text is scanned, but the answer is empty, so nothing after the scan
    # (building and sending a large answer) can make room for the pings.
    heavy = {"name": "linkEntities", "arguments": {"text": LONG_TEXT, "minConfidence": 1}}
    answered, answer = asyncio.run(_pings_while(server, heavy))
    assert answer["structuredContent"] == {"items": []}
    # On the event loop the first ping waited for the whole scan (none came back before it ended; one at
    # most, by a race of the two answers on the client); in a thread, about ten do.
    assert answered >= 2, answered


class _Registrar:
    """Collects the tool functions a pack registers, as the core's Registrar would, without serving them."""

    def __init__(self) -> None:
        self.tools: dict[str, Any] = {}

    def tool(self, name: str, **_: Any) -> Any:
        def register(function: Any) -> Any:
            self.tools[name] = function
            return function
        return register


class _Index:
    """Records on which thread the search work ran: the query's embedding, BM25 and the store live in here."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []

    def search_documents(self, *_: Any, **__: Any) -> list:
        self.threads.append(threading.current_thread())
        return []

    def search_passages(self, *_: Any, **__: Any) -> list:
        self.threads.append(threading.current_thread())
        return []


class _Service:
    def __init__(self, index: _Index) -> None:
        self._index = index

    async def index(self) -> _Index:
        return self._index

    def record_search(self, *_: Any) -> None:
        pass


@pytest.mark.parametrize("tool", ["search", "searchPassages"])
def test_search_work_runs_in_a_worker_thread_not_on_the_event_loop(tool: str) -> None:
    # A 1,000-character query is now ~15 ms of inference: too short to tell, by pings answered meanwhile,
    # whether it held the loop. Where the work runs is what decides that, so that is what is checked.
    registrar, index = _Registrar(), _Index()
    knowledge_tools._register_search(registrar, _Service(index))
    knowledge_tools._register_search_passages(registrar, _Service(index))

    async def call() -> threading.Thread:
        await registrar.tools[tool](query="how do I back up the state file")
        return threading.current_thread()

    loop_thread = asyncio.run(call())
    assert len(index.threads) == 1 and index.threads[0] is not loop_thread


def test_link_entities_still_answers_every_mention(server: str) -> None:
    answer = httpx.post(server + "/mcp/tools/call", headers=JSON, timeout=60,
                        json={"name": "linkEntities", "arguments": {"text": LONG_TEXT}}).json()
    spans = {item["id"]: len(item["spans"]) for item in answer["structuredContent"]["items"]}
    assert spans["snapshot"] == LONG_TEXT.count("snapshot") and spans["write-ahead-log"] > 0
