"""Long work seen by a client of a real `hexmcp` process (`indexDocuments` over a --docs corpus, a call
forwarded to an upstream server, the start-up build and concept extraction), on every transport: progress
(increasing, with a total and a message, none without a token, none after the answer, two calls' tokens
never crossed), cancellation (a notification, a client leaving, a socket or a session closed: the work
stops, nothing more is sent, the index keeps serving, the same work runs again; cancelling initialize, a
finished or an unknown request changes nothing), tasks (another client cannot reach one, a finished one is
forgotten after its TTL), SIGTERM with work in flight or in the background, and the foreground (a second
client's tools/list and classify_text) answering throughout.

"The work stopped" is read from outside: /health's `background` is empty again and the passage-vector
cache (one file per document embedded) stops changing. "Nothing more was sent" on stdio and WebSocket is
read against a ping sent right behind the cancellation: its answer marks the moment the server had
handled the cancellation, and nothing of the cancelled call may follow it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import httpx
import pytest
import websockets
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from hexmcp.core import TASKS_EXTENSION
from hexmcp.tools.knowledge.builder import WINDOW_PASSAGES
from tests.adapters.http_wire import MODERN, Wire, modern_params
from tests.support.docs_server import docs_env
from tests.support.knowledge_corpus import write_numbered_corpus
from tests.support.serve_process import ServeProcess, serve_process

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

DOCUMENTS, PARAGRAPHS = 30, 12
BIG_DOCUMENTS = 200  # a start-up build long enough to be stopped mid-way
CONCEPT_DOCUMENTS = 150  # a concept extraction long enough to be stopped mid-way
IN_FLIGHT_DOCUMENTS = WINDOW_PASSAGES // (PARAGRAPHS + 1) + 2  # the build's window, and the document being queued
PASSAGES = DOCUMENTS * (PARAGRAPHS + 1)
HANDSHAKE = "2025-11-25"
INIT = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "long-work", "version": "1"}}
FRESH = {"name": "indexDocuments", "arguments": {"fresh": True}}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
MATH = "What is the derivative of x squared with respect to x?"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Enough passages that a fresh index takes seconds, so a cancellation lands mid-way."""
    return write_corpus(tmp_path_factory.mktemp("long-work-corpus"), DOCUMENTS)


def write_corpus(root: Path, documents: int) -> Path:
    return write_numbered_corpus(root, documents, PARAGRAPHS)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("long-work-cache")


@contextlib.contextmanager
def docs_server(corpus: Path, cache: Path, *flags: str, classifier: bool = False,
                stderr: Any = None) -> Iterator[ServeProcess]:
    extra = () if classifier else ("--no-classifier",)
    with serve_process(*extra, "--docs", str(corpus), *flags, env=docs_env(cache), healthy=False,
                       stderr=stderr) as served:
        deadline = time.monotonic() + 180
        while not _indexed(served):
            assert served.process.poll() is None, f"the server exited with {served.process.returncode}"
            assert time.monotonic() < deadline, "the corpus was never indexed"
            time.sleep(0.2)
        yield served


def _indexed(served: ServeProcess) -> bool:
    try:
        return bool(served.health().json()["knowledge"]["complete"])
    except (httpx.HTTPError, ValueError, KeyError):
        return False


@pytest.fixture(scope="module")
def server(corpus: Path, cache: Path) -> Iterator[ServeProcess]:
    """One server for the HTTP and WebSocket probes, with the classifier (the foreground a router uses) and a
    trusted proxy (127.0.0.1), so a request can stand for another client by naming its address."""
    with docs_server(corpus, cache, "--trusted-proxies", "127.0.0.1", classifier=True) as served:
        yield served


def cached_vectors(cache: Path) -> int:
    return len(list((cache / "knowledge").glob("*.npz")))


async def settled(cache: Path) -> int:
    """The vector cache's count once it has not changed for 1.5 s (within 15 s)."""
    count, since, deadline = cached_vectors(cache), time.monotonic(), time.monotonic() + 15
    while time.monotonic() - since < 1.5:
        assert time.monotonic() < deadline, "documents were still embedded 15 s after the cancellation"
        await asyncio.sleep(0.1)
        if (now := cached_vectors(cache)) != count:
            count, since = now, time.monotonic()
    return count


async def background(base: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(timeout=10) as http:
        return (await http.get(base + "/health")).json()["background"]  # type: ignore[no-any-return]


async def until_indexing(base: str) -> None:
    """Until the re-index has embedded a few documents: the cancellation then lands mid-way."""
    for _ in range(600):
        running = await background(base)
        if running and running[0]["kind"] == "re-indexing" and running[0]["done"] >= 3 * (PARAGRAPHS + 1):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the re-index never started")


async def assert_stopped(base: str, cache: Path) -> None:
    """The re-index is gone from /health within seconds (once the documents in its window are saved) and
    the vector cache no longer changes."""
    for _ in range(500):
        if not await background(base):
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError(f"still indexing 10 s after it was cancelled: {await background(base)}")
    stopped_at = cached_vectors(cache)
    await asyncio.sleep(1.0)
    assert cached_vectors(cache) == stopped_at, "documents were still embedded after the cancellation"
    assert stopped_at < DOCUMENTS, "the fresh index ran to its end: it was not stopped"


async def restore(base: str) -> None:
    """Index again without `fresh` (what a client re-issuing the cancelled work does): it completes, embeds
    what the cancellation left out, and puts the vector cache back for the next test and server."""
    async with httpx.AsyncClient(timeout=120) as http:
        answer = (await http.post(base + "/mcp/tools/call", json={"name": "indexDocuments", "arguments": {}})).json()
    summary = answer["structuredContent"]
    assert summary["passages"] == PASSAGES and 0 < summary["embedded"] <= PASSAGES, answer


async def search_answers(base: str) -> None:
    """The index that was serving before the cancelled re-index is still complete and still answers."""
    async with httpx.AsyncClient(timeout=30) as http:
        knowledge = (await http.get(base + "/health")).json()["knowledge"]
        assert knowledge["complete"] and knowledge["passages"] == PASSAGES, knowledge
        answer = (await http.post(base + "/mcp/tools/call", json={"name": "search",
                                                                 "arguments": {"query": "topic 5 in some detail"}})).json()
    assert answer["structuredContent"]["results"], answer


def progress_of(messages: list[dict[str, Any]], token: Any) -> list[dict[str, Any]]:
    return [m["params"] for m in messages
            if m.get("method") == "notifications/progress" and m["params"]["progressToken"] == token]


def assert_good_progress(progress: list[dict[str, Any]], total: int) -> None:
    assert progress, "no progress was reported"
    values = [p["progress"] for p in progress]
    assert values == sorted(set(values)), f"progress did not increase: {values}"
    assert all(p["total"] == total and p["message"] == "indexing passages" for p in progress), progress[:3]
    assert values[-1] == total, f"the last progress is not the total: {values[-3:]}"


# --- a line-framed JSON-RPC client: stdio and WebSocket ------------------------------------------------


class StdioClient:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        await self.process.stdin.drain()

    async def recv(self, timeout: float = 60) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        assert line, "the server closed stdout"
        return json.loads(line)  # type: ignore[no-any-return]


class WsClient:
    def __init__(self, socket: Any) -> None:
        self.socket = socket

    async def send(self, message: dict[str, Any]) -> None:
        await self.socket.send(json.dumps({"jsonrpc": "2.0", **message}))

    async def recv(self, timeout: float = 60) -> dict[str, Any]:
        return json.loads(await asyncio.wait_for(self.socket.recv(), timeout))  # type: ignore[no-any-return]


async def until_answer(client: Any, request_id: Any) -> list[dict[str, Any]]:
    """Every message up to and including the answer to `request_id`."""
    seen = []
    while True:
        message = await client.recv()
        seen.append(message)
        if message.get("id") == request_id and "method" not in message:
            return seen


async def quiet_for(client: Any, seconds: float) -> list[dict[str, Any]]:
    seen = []
    with contextlib.suppress(asyncio.TimeoutError):
        while True:
            seen.append(await client.recv(timeout=seconds))
    return seen


async def initialize(client: Any) -> None:
    await client.send({"id": "init", "method": "initialize", "params": INIT})
    assert "result" in (await client.recv())
    await client.send({"method": "notifications/initialized"})


@contextlib.asynccontextmanager
async def stdio_client(corpus: Path, cache: Path) -> AsyncIterator[StdioClient]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hexmcp.app.cli", "stdio", "--no-classifier", "--docs", str(corpus),
        "--log-level", "warning", stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=docs_env(cache),
        limit=1 << 24)
    try:
        yield StdioClient(process)
    finally:
        if process.returncode is None:
            process.stdin.close()  # type: ignore[union-attr]
            try:
                await asyncio.wait_for(process.wait(), 30)
            except asyncio.TimeoutError:
                process.kill()
                await process.wait()


@contextlib.asynccontextmanager
async def ws_client(base: str) -> AsyncIterator[WsClient]:
    async with websockets.connect(base.replace("http://", "ws://") + "/ws", subprotocols=["mcp"],
                                  max_size=1 << 24) as socket:
        yield WsClient(socket)


# --- progress ------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_progress_over_the_official_sdk_client_increases_to_its_total(server: ServeProcess) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with streamable_http_client(server.base + "/mcp") as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            result = await session.call_tool("indexDocuments", {"fresh": True}, progress_callback=on_progress)
    assert not result.is_error and result.structured_content["passages"] == PASSAGES
    assert_good_progress([{"progress": p, "total": t, "message": m} for p, t, m in seen], PASSAGES)


@pytest.mark.anyio
async def test_progress_on_stdio_follows_each_token_and_ends_with_its_answer(corpus: Path, cache: Path) -> None:
    """Two calls at once, a string token and an integer one, and a third with none: each token's progress
    increases to its own total, none comes after its call's answer, and the call without one gets none."""
    async with stdio_client(corpus, cache) as client:
        await initialize(client)
        await client.send({"id": 1, "method": "tools/call", "params": {
            "name": "indexDocuments", "arguments": {"fresh": True, "path": "doc00"}, "_meta": {"progressToken": "A"}}})
        await client.send({"id": 2, "method": "tools/call", "params": {
            "name": "indexDocuments", "arguments": {"fresh": True, "path": "doc01"}, "_meta": {"progressToken": 2}}})
        await client.send({"id": 3, "method": "tools/call", "params": {
            "name": "indexDocuments", "arguments": {"fresh": True, "path": "doc02"}}})
        seen: list[dict[str, Any]] = []
        while {m.get("id") for m in seen if "result" in m or "error" in m} != {1, 2, 3}:
            seen.append(await client.recv())
        seen += await quiet_for(client, 0.5)
        tokens = {p["progressToken"] for p in progress_of(seen, "A") + progress_of(seen, 2)}
        assert {m["params"]["progressToken"] for m in seen if m.get("method") == "notifications/progress"} == {"A", 2}
        assert tokens == {"A", 2} and type(progress_of(seen, 2)[0]["progressToken"]) is int
        for token, request_id in (("A", 1), (2, 2)):
            answered_at = next(i for i, m in enumerate(seen) if m.get("id") == request_id and "method" not in m)
            assert "result" in seen[answered_at], seen[answered_at]
            assert_good_progress(progress_of(seen, token), 10 * (PARAGRAPHS + 1))
            assert not progress_of(seen[answered_at:], token), f"progress for {token!r} after its answer"


@pytest.mark.anyio
async def test_two_calls_in_one_http_session_each_get_only_their_own_progress(server: ServeProcess) -> None:
    wire = Wire(server.base)
    try:
        wire.initialize(HANDSHAKE)
        headers = wire.headers(version=HANDSHAKE)
    finally:
        wire.close()

    async def call(http: httpx.AsyncClient, request_id: int, path: str, token: Any) -> list[dict[str, Any]]:
        seen = []
        async with http.stream("POST", server.base + "/mcp", headers=headers, json={
                "jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
                    "name": "indexDocuments", "arguments": {"fresh": True, "path": path},
                    "_meta": {"progressToken": token}}}) as response:
            async for line in response.aiter_lines():
                if line.startswith("data:") and line[5:].strip():
                    seen.append(json.loads(line[5:]))
        return seen

    async with httpx.AsyncClient(timeout=120) as http:
        first, second = await asyncio.gather(call(http, 1, "doc00", "first"), call(http, 2, "doc01", 2))
    for seen, token, request_id in ((first, "first", 1), (second, 2, 2)):
        assert seen[-1]["id"] == request_id and "result" in seen[-1], seen[-1]
        assert {m["params"]["progressToken"] for m in seen if m.get("method") == "notifications/progress"} == {token}
        assert_good_progress(progress_of(seen, token), 10 * (PARAGRAPHS + 1))


# --- cancellation ----------------------------------------------------------------------------------------


async def cancel_mid_way(client: Any, base: str | None, cache: Path) -> None:
    """Start a fresh index, cancel it after some progress, and check what follows; then cancel it again
    (finished), cancel an id never used, and re-issue the work. `base`: the server's /health and search
    (None on stdio, where the vector cache alone shows the work stopped)."""
    await client.send({"id": 10, "method": "tools/call", "params": {**FRESH, "_meta": {"progressToken": "cut"}}})
    for _ in range(3):
        while (await client.recv()).get("method") != "notifications/progress":
            pass
    await client.send({"method": "notifications/cancelled", "params": {"requestId": 10, "reason": "probe"}})
    await client.send({"id": 11, "method": "ping"})
    await until_answer(client, 11)
    handled_at = cached_vectors(cache)
    after = await quiet_for(client, 1.0)
    assert not [m for m in after if m.get("id") == 10], f"the cancelled call was answered: {after}"
    assert not progress_of(after, "cut"), f"progress after the cancellation was handled: {progress_of(after, 'cut')}"
    if base is not None:
        await assert_stopped(base, cache)
        await search_answers(base)
    else:
        # The documents in the build's window when the cancellation came are finished and saved
        # (builder._drain), then nothing more: the count settles, at most a window past where it was.
        stopped_at = await settled(cache)
        assert stopped_at - handled_at <= IN_FLIGHT_DOCUMENTS, f"{stopped_at - handled_at} documents after the cancellation"
        assert stopped_at < DOCUMENTS, "the fresh index ran to its end: it was not stopped"
    # Harmless: the same (finished) request cancelled again, and a request that never existed.
    await client.send({"method": "notifications/cancelled", "params": {"requestId": 10}})
    await client.send({"method": "notifications/cancelled", "params": {"requestId": "never-sent"}})
    await client.send({"id": 12, "method": "tools/call", "params": {"name": "indexDocuments", "arguments": {},
                                                                   "_meta": {"progressToken": "again"}}})
    seen = await until_answer(client, 12)
    summary = seen[-1]["result"]["structuredContent"]
    assert summary["passages"] == PASSAGES and 0 < summary["embedded"] < PASSAGES, summary
    assert progress_of(seen, "again"), "the re-issued call reported no progress"


@pytest.mark.anyio
async def test_a_cancelled_call_on_stdio_stops_and_sends_nothing_more(corpus: Path, cache: Path) -> None:
    async with stdio_client(corpus, cache) as client:
        await initialize(client)
        await cancel_mid_way(client, None, cache)


@pytest.mark.anyio
async def test_a_cancelled_call_on_a_websocket_stops_and_sends_nothing_more(server: ServeProcess, cache: Path) -> None:
    async with ws_client(server.base) as client:
        await initialize(client)
        await cancel_mid_way(client, server.base, cache)


@pytest.mark.anyio
async def test_cancelling_initialize_is_ignored(corpus: Path, cache: Path) -> None:
    async with stdio_client(corpus, cache) as client:
        await client.send({"id": 1, "method": "initialize", "params": INIT})
        await client.send({"method": "notifications/cancelled", "params": {"requestId": 1}})
        assert (await client.recv())["result"]["protocolVersion"] == HANDSHAKE
        await client.send({"method": "notifications/initialized"})
        await client.send({"id": 2, "method": "tools/list"})
        assert any(t["name"] == "indexDocuments" for t in (await client.recv())["result"]["tools"])


@pytest.mark.anyio
async def test_a_cancelled_call_in_an_http_session_ends_its_stream_without_an_answer(server: ServeProcess,
                                                                                    cache: Path) -> None:
    async with httpx.AsyncClient(timeout=60) as http:
        opened = await http.post(server.base + "/mcp", headers=ACCEPT,
                                 json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        headers = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": HANDSHAKE}
        await http.post(server.base + "/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        seen: list[dict[str, Any]] = []

        async def call() -> None:
            async with http.stream("POST", server.base + "/mcp", headers=headers, json={
                    "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {**FRESH, "_meta": {"progressToken": 7}}}) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data:") and line[5:].strip():
                        seen.append(json.loads(line[5:]))

        streaming = asyncio.ensure_future(call())
        await until_indexing(server.base)
        cancelled = await http.post(server.base + "/mcp", headers=headers, json={
            "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
        assert cancelled.status_code == 202
        await asyncio.wait_for(streaming, 10)  # the stream ends
        assert not [m for m in seen if m.get("id") == 7], "the cancelled call was answered"
        await assert_stopped(server.base, cache)
        await search_answers(server.base)
        await restore(server.base)


async def leave_mid_way(base: str, post: Any) -> None:
    async def call() -> None:
        async with httpx.AsyncClient(timeout=60) as http:
            await post(http)

    calling = asyncio.ensure_future(call())
    await until_indexing(base)
    calling.cancel()  # the client closes its connection
    with contextlib.suppress(asyncio.CancelledError):
        await calling


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["sessionless POST", "2026-07-28 POST", "REST", "WebSocket closed", "session deleted"])
async def test_a_client_that_leaves_stops_its_work(how: str, server: ServeProcess, cache: Path) -> None:
    """A client whose answer can go nowhere else: a sessionless POST to /mcp (no session, so no stream to
    resume), the REST dialect, a WebSocket closed, an HTTP session ended with DELETE. (A session's POST
    stream is resumable, so a client leaving it is not cancelling, as the spec says: not probed here.) A
    2026-07-28 POST: the way that version cancels."""
    base = server.base
    if how == "sessionless POST":
        await leave_mid_way(base, lambda http: http.post(base + "/mcp", headers=ACCEPT, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": FRESH}))
    elif how == "2026-07-28 POST":  # no tasks capability: the call runs on the POST, whose closing cancels it
        headers = {**ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "indexDocuments"}
        await leave_mid_way(base, lambda http: http.post(base + "/mcp", headers=headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": modern_params(FRESH)}))
    elif how == "REST":
        await leave_mid_way(base, lambda http: http.post(base + "/mcp/tools/call", json=FRESH))
    elif how == "WebSocket closed":
        async with ws_client(base) as client:
            await initialize(client)
            await client.send({"id": 1, "method": "tools/call", "params": FRESH})
            await until_indexing(base)
    else:
        wire = Wire(base)
        try:
            wire.initialize(HANDSHAKE)
            headers = wire.headers(version=HANDSHAKE)
            calling = asyncio.ensure_future(asyncio.to_thread(httpx.post, base + "/mcp", headers=headers, timeout=60,
                                                              json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                                    "params": FRESH}))
            await until_indexing(base)
            assert wire.http.delete("/mcp", headers=headers).status_code == 200
            await calling
        finally:
            wire.close()
    await assert_stopped(base, cache)
    await search_answers(base)
    await restore(base)


# --- a call forwarded to an upstream server ---------------------------------------------------------------

SLEEPY_UPSTREAM = """
import json, sys, threading, time
log, stopped, lock = sys.argv[1], set(), threading.Lock()
def send(message):
    with lock:
        sys.stdout.write(json.dumps(message) + "\\n")
        sys.stdout.flush()
def work(ident, token, steps):
    for step in range(1, steps + 1):
        time.sleep(0.1)
        if ident in stopped:
            with open(log, "a") as out:
                out.write(json.dumps({"stopped": ident, "step": step}) + "\\n")
            return
        if token is not None:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": step, "total": steps, "message": f"step {step}"}})
    send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": f"slept {steps}"}]}})
for line in sys.stdin:
    message = json.loads(line)
    ident, method, params = message.get("id"), message.get("method"), message.get("params") or {}
    if method == "notifications/cancelled":
        stopped.add(params.get("requestId"))
    if ident is None:
        continue
    if method == "tools/call":
        steps = int(params.get("arguments", {}).get("steps", 100))
        threading.Thread(target=work, args=(ident, (params.get("_meta") or {}).get("progressToken"), steps)).start()
        continue
    result = {}
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "serverInfo": {"name": "sleepy", "version": "1"},
                  "capabilities": {"tools": {}}}
    elif method == "tools/list":
        result = {"tools": [{"name": "nap", "inputSchema": {"type": "object"}}]}
    send({"jsonrpc": "2.0", "id": ident, "result": result})
"""


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["stdio", "ws"])
async def test_a_call_forwarded_upstream_relays_progress_and_its_cancellation_stops_the_upstream(
        transport: str, tmp_path: Path) -> None:
    script, stopped = tmp_path / "sleepy.py", tmp_path / "stopped.jsonl"
    script.write_text(SLEEPY_UPSTREAM, encoding="utf-8")
    upstream = f"sleepy=stdio:{sys.executable} {script} {stopped}"
    if transport == "stdio":
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hexmcp.app.cli", "stdio", "--no-classifier", "--no-knowledge", "--upstream",
            upstream, "--log-level", "warning", stdin=subprocess.PIPE, stdout=subprocess.PIPE, limit=1 << 24)
        try:
            client = StdioClient(process)
            await initialize(client)
            await forwarded_call_cancelled(client, stopped)
        finally:
            process.stdin.close()  # type: ignore[union-attr]
            await asyncio.wait_for(process.wait(), 30)
        return
    with serve_process("--no-classifier", "--no-knowledge", "--upstream", upstream) as served:
        served.wait_for_tool("sleepy__nap")
        async with ws_client(served.base) as ws:
            await initialize(ws)
            await forwarded_call_cancelled(ws, stopped)


async def forwarded_call_cancelled(client: Any, stopped: Path) -> None:
    for _ in range(300):  # the upstream is mounted in the background
        await client.send({"id": "list", "method": "tools/list"})
        if "sleepy__nap" in {t["name"] for t in (await until_answer(client, "list"))[-1]["result"]["tools"]}:
            break
        await asyncio.sleep(0.1)
    await client.send({"id": 1, "method": "tools/call", "params": {"name": "sleepy__nap", "arguments": {"steps": 3},
                                                                  "_meta": {"progressToken": "short"}}})
    seen = await until_answer(client, 1)
    assert seen[-1]["result"]["content"][0]["text"] == "slept 3"
    relayed = progress_of(seen, "short")
    assert [p["progress"] for p in relayed] == [1, 2, 3] and relayed[-1]["message"] == "step 3", relayed
    await client.send({"id": 2, "method": "tools/call", "params": {"name": "sleepy__nap", "arguments": {},
                                                                  "_meta": {"progressToken": 2}}})
    for _ in range(3):
        while (await client.recv()).get("method") != "notifications/progress":
            pass
    await client.send({"method": "notifications/cancelled", "params": {"requestId": 2}})
    await client.send({"id": 3, "method": "ping"})
    await until_answer(client, 3)
    after = await quiet_for(client, 1.5)
    assert not [m for m in after if m.get("id") == 2], f"the cancelled call was answered: {after}"
    assert not progress_of(after, 2), f"progress went on after the cancellation: {progress_of(after, 2)}"
    assert stopped.exists() and '"stopped": ' in stopped.read_text(encoding="utf-8"), \
        "the upstream was not told to stop"
    await client.send({"id": 4, "method": "tools/call", "params": {"name": "sleepy__nap", "arguments": {"steps": 1}}})
    assert (await until_answer(client, 4))[-1]["result"]["content"][0]["text"] == "slept 1"


# --- tasks -----------------------------------------------------------------------------------------------

TASKS = {"extensions": {TASKS_EXTENSION: {}}}


def test_a_task_is_only_reachable_by_its_own_client(server: ServeProcess) -> None:
    """Two clients (two addresses, named by the trusted proxy): the second gets the "not found" an unknown
    id gets, for tasks/get and tasks/cancel, while the first polls its task to completion."""
    wire = Wire(server.base)
    try:
        alice, bob = {"x-forwarded-for": "10.0.0.1"}, {"x-forwarded-for": "10.0.0.2"}
        _, messages = wire.modern("tools/call", {"name": "indexDocuments", "arguments": {"path": "doc00"}},
                                  name="indexDocuments", capabilities=TASKS, extra=alice)
        created = messages[-1]["result"]
        assert created["resultType"] == "task", created
        task_id = created["taskId"]
        for method in ("tasks/get", "tasks/cancel"):
            _, answer = wire.modern(method, {"taskId": task_id}, name=task_id, capabilities=TASKS, extra=bob)
            assert "error" in answer[-1], f"another client reached the task with {method}: {answer}"
        unknown = wire.modern("tasks/get", {"taskId": "no-such-task"}, name="no-such-task", capabilities=TASKS,
                              extra=bob)[1][-1]
        assert answer[-1]["error"]["code"] == unknown["error"]["code"]
        statuses = []
        for _ in range(600):
            task = wire.modern("tasks/get", {"taskId": task_id}, name=task_id, capabilities=TASKS, extra=alice)[1][-1]
            statuses.append(task["result"]["status"])
            if statuses[-1] in {"completed", "failed", "cancelled"}:
                break
            time.sleep(0.05)
        assert statuses[-1] == "completed" and set(statuses) <= {"working", "completed"}, statuses
        # ADR 1001: the 2025-11-25 experimental task methods are not served, on any version.
        for method in ("tasks/list", "tasks/result"):
            refused = wire.modern(method, {"taskId": task_id} if method == "tasks/result" else {}, capabilities=TASKS,
                                  extra=alice)[1][-1]
            assert refused["error"]["code"] == -32601, refused
    finally:
        wire.close()


def test_a_finished_task_is_forgotten_after_its_ttl(corpus: Path, cache: Path) -> None:
    with docs_server(corpus, cache, "--task-ttl", "1500") as served:
        wire = Wire(served.base)
        try:
            created = wire.modern("tools/call", {"name": "indexDocuments", "arguments": {"path": "doc00"}},
                                  name="indexDocuments", capabilities=TASKS)[1][-1]["result"]
            task_id = created["taskId"]
            for _ in range(600):
                task = wire.modern("tasks/get", {"taskId": task_id}, name=task_id, capabilities=TASKS)[1][-1]["result"]
                if task["status"] != "working":
                    break
                time.sleep(0.05)
            assert task["status"] == "completed" and task["result"]["structuredContent"]["documents"] == 10, task
            time.sleep(2.0)
            gone = wire.modern("tasks/get", {"taskId": task_id}, name=task_id, capabilities=TASKS)[1][-1]
            assert "error" in gone, f"the task outlived its TTL: {gone}"
        finally:
            wire.close()


# --- shutdown --------------------------------------------------------------------------------------------


def test_sigterm_while_indexing_answers_the_call_then_exits_0_with_a_drained_line(corpus: Path, cache: Path,
                                                                                 tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    # A drain deadline well past the re-index's length: what is tested is that the call in flight is answered
    # before the exit, not how fast a loaded machine embeds (at the default 10 s, a CI host running other
    # jobs cut the call).
    with open(log, "wb") as stderr, docs_server(corpus, cache, "--log-level", "info", "--drain-timeout", "90",
                                                stderr=stderr) as served:
        calling = _in_thread(lambda: httpx.post(served.base + "/mcp", headers=ACCEPT, timeout=120, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": FRESH}))
        asyncio.run(until_indexing(served.base))
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=120) == 0
        answer = calling.result(timeout=10)
        assert answer.status_code == 200 and answer.json()["result"]["structuredContent"]["passages"] == PASSAGES
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.startswith("{")]
    drained = [line for line in lines if line.get("event") == "drained"]
    assert drained and drained[-1]["cut"] == 0, lines[-5:]


def test_sigterm_during_start_up_indexing_on_stdio_exits_0_and_warns_of_nothing(tmp_path: Path) -> None:
    """A cold cache and a bigger corpus, so the start-up build is mid-way when SIGTERM comes and has published
    partial indexes. Its documents in flight are saved as it stops; the partial index it published meanwhile
    once met the closed event loop, which the build reported (with a traceback) as "a document in flight
    failed while stopping"."""
    corpus, cache = tmp_path / "corpus", tmp_path / "cold-cache"
    write_corpus(corpus, BIG_DOCUMENTS)
    process = subprocess.Popen([sys.executable, "-m", "hexmcp.app.cli", "stdio", "--no-classifier", "--docs",
                                str(corpus), "--log-level", "info"], env=docs_env(cache), stdin=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (cache / "knowledge").is_dir() or cached_vectors(cache) < 20:
            assert process.poll() is None and time.monotonic() < deadline, "the start-up build never began"
            time.sleep(0.02)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        assert cached_vectors(cache) < BIG_DOCUMENTS, "the build had finished: nothing was in flight"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    lines = [json.loads(line) for line in process.stderr.read().decode().splitlines() if line.startswith("{")]  # type: ignore[union-attr]
    assert not [line for line in lines if line.get("level") in ("warning", "error")], lines[-3:]
    assert lines[-1]["event"] == "stdio session ended", lines[-3:]


def test_sigterm_during_concept_extraction_stops_it_and_exits_0(tmp_path: Path) -> None:
    """The concept extraction that follows the index reads every document on a thread the process waits for at
    exit; SIGTERM mid-way stops it between two documents (it ran to its end before, seconds on a few hundred
    pages, while the process sat drained and silent)."""
    corpus, cache, log = tmp_path / "corpus", tmp_path / "cache", tmp_path / "serve.log"
    write_numbered_corpus(corpus, CONCEPT_DOCUMENTS, 3)  # short pages: a quick index, then many documents to read
    with open(log, "wb") as stderr, serve_process("--no-classifier", "--docs", str(corpus), "--log-level", "info",
                                                  env=docs_env(cache), healthy=False, stderr=stderr) as served:
        deadline = time.monotonic() + 180
        while True:
            assert served.process.poll() is None and time.monotonic() < deadline, "no concept extraction was seen"
            with contextlib.suppress(httpx.HTTPError, ValueError, KeyError):
                running = [work for work in served.health().json()["background"]
                           if work["kind"] == "concept extraction"]
                if running and running[0]["total"] and 2 <= running[0]["done"] < running[0]["total"] - 20:
                    break
            time.sleep(0.02)
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=60) == 0
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.startswith("{")]
    stopped = [line for line in lines if line.get("event") == "concept extraction stopped with the server"]
    assert stopped and stopped[0]["documents"] < CONCEPT_DOCUMENTS, lines[-4:]
    assert not [line for line in lines if line.get("event") == "concepts ready"]


def _in_thread(work: Any) -> Any:
    import concurrent.futures

    pool = concurrent.futures.ThreadPoolExecutor(1)
    future = pool.submit(work)
    pool.shutdown(wait=False)
    return future


# --- the foreground --------------------------------------------------------------------------------------


def test_tools_list_and_classify_text_keep_answering_while_a_corpus_is_indexed(server: ServeProcess) -> None:
    """Correctness only (timing is bench/background_yield.py's): the same answers during indexing as idle."""
    wire = Wire(server.base)
    try:
        wire.initialize(HANDSHAKE)

        def classify() -> Any:
            _, messages = wire.request("tools/call", {"name": "classify_text", "arguments": {"text": MATH}},
                                       version=HANDSHAKE)
            return messages[-1]["result"]["structuredContent"]

        idle = classify()
        calling = _in_thread(lambda: httpx.post(server.base + "/mcp/tools/call", json=FRESH, timeout=120))
        asyncio.run(until_indexing(server.base))
        rounds = 0
        while not calling.done():
            _, listed = wire.request("tools/list", version=HANDSHAKE)
            assert {"indexDocuments", "classify_text"} <= {t["name"] for t in listed[-1]["result"]["tools"]}
            assert classify() == idle
            rounds += 1
        assert rounds >= 3, "the index finished before the foreground was probed: make the corpus bigger"
        assert calling.result().json()["structuredContent"]["embedded"] == PASSAGES
    finally:
        wire.close()
