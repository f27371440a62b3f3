"""A scripted OpenAI-compatible gateway (Starlette under uvicorn, on a free port) for the gateway tests.

Each request to `/v1/chat/completions` or `/v1/models` takes the next `Script` queued for that path
(or the path's default, a normal answer) and plays it: a status with headers and a JSON body, latency,
a body sent slowly, an oversize body, a connection cut mid-body, a streamed (SSE) answer, or a hang
that lasts until the client goes away. Everything it saw is recorded: bodies, headers, and the
requests whose client disconnected before the answer was complete.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import threading
from typing import Any, Iterator

import attrs
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from tests.support.net import free_port, uvicorn_in_thread

MODELS = ("llama-3.1-8b-instruct", "qwen3-32b")


@attrs.frozen(kw_only=True)
class Script:
    status: int = 200
    body: Any = None
    """JSON body (None: the normal answer for the path)."""
    headers: dict[str, str] = attrs.field(factory=dict)
    delay_s: float = 0.0
    """Before the status line."""
    stream: tuple[str, ...] | None = None
    """Answer as SSE chunks with these text pieces."""
    piece_delay_s: float = 0.0
    stream_cut_after: int | None = None
    """Drop the connection after this many streamed pieces."""
    slow_body_pause_s: float = 0.0
    """Send the body a byte at a time with this pause between bytes."""
    oversize_bytes: int = 0
    """Send a well-formed JSON body padded to this size."""
    cut_after_bytes: int | None = None
    """Declare the full length, send this many bytes, then drop the connection."""
    hang: bool = False
    """Never answer; record the client's disconnect."""


def completion(text: str, model: str, *, prompt_tokens: int = 11, completion_tokens: int = 7) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


class FakeGateway:
    def __init__(self) -> None:
        self.port = free_port()
        self.scripts: dict[str, collections.deque[Script]] = collections.defaultdict(collections.deque)
        self.requests: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        self.disconnects: list[str] = []
        self.client_ports: list[int] = []  # the client's port of each request: one per connection it used
        self.models = list(MODELS)
        self.reply_text = "The answer is 42."
        self._lock = threading.Lock()
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"]),
                                     Route("/v1/models", self._models, methods=["GET"])])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def queue(self, path: str, *scripts: Script) -> None:
        """Queue scripts for `chat` or `models`, played in order, one per request."""
        with self._lock:
            self.scripts[path].extend(scripts)

    def count(self, path: str) -> int:
        with self._lock:
            return sum(1 for p, _, _ in self.requests if p == path)

    def bodies(self, path: str = "chat") -> list[dict[str, Any]]:
        with self._lock:
            return [body for p, body, _ in self.requests if p == path]

    def headers_seen(self) -> list[dict[str, str]]:
        with self._lock:
            return [headers for _, _, headers in self.requests]

    def _next(self, path: str) -> Script:
        with self._lock:
            return self.scripts[path].popleft() if self.scripts[path] else Script()

    async def _chat(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self._record("chat", body, request)
        script = self._next("chat")
        default = completion(self.reply_text, body.get("model", "?"))
        if script.stream is None and body.get("stream") and script.body is None and script.status == 200 \
                and not (script.hang or script.cut_after_bytes or script.slow_body_pause_s or script.oversize_bytes):
            script = attrs.evolve(script, stream=tuple(self.reply_text.split(" ")))
        return await self._play(script, default, request, body.get("model", "?"))

    async def _models(self, request: Request) -> Response:
        self._record("models", {}, request)
        default = {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "fake"} for m in self.models]}
        return await self._play(self._next("models"), default, request, None)

    def _record(self, path: str, body: dict[str, Any], request: Request) -> None:
        with self._lock:
            self.requests.append((path, body, dict(request.headers)))
            if request.client is not None:
                self.client_ports.append(request.client.port)

    async def _play(self, script: Script, default: Any, request: Request, model: str | None) -> Response:
        if script.hang:
            await _until_disconnect(request)
            with self._lock:
                self.disconnects.append(request.url.path)
            return Response(status_code=499)
        if script.delay_s:
            await asyncio.sleep(script.delay_s)
        payload = json.dumps(script.body if script.body is not None else default).encode()
        headers = dict(script.headers)
        if script.stream is not None:
            return StreamingResponse(self._sse(script, model or "?", request), media_type="text/event-stream",
                                     headers=headers)
        if script.oversize_bytes:
            payload = json.dumps({**default, "padding": "x" * script.oversize_bytes}).encode()
        if script.slow_body_pause_s:
            return StreamingResponse(_slowly(payload, script.slow_body_pause_s), status_code=script.status,
                                     media_type="application/json", headers=headers)
        if script.cut_after_bytes is not None:
            return _CutResponse(payload, script.cut_after_bytes, script.status, headers)
        return Response(payload, status_code=script.status, media_type="application/json", headers=headers)

    async def _sse(self, script: Script, model: str, request: Request) -> Any:
        pieces = script.stream or ()
        try:
            for index, piece in enumerate(pieces):
                if script.stream_cut_after is not None and index == script.stream_cut_after:
                    raise ConnectionResetError("scripted cut mid-stream")
                text = piece if index == 0 else " " + piece
                chunk = {"model": model, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
                yield f"data: {json.dumps(chunk)}\n\n"
                if script.piece_delay_s:
                    await asyncio.sleep(script.piece_delay_s)
            final = {"model": model, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 5, "completion_tokens": len(pieces), "total_tokens": 5 + len(pieces)}}
            yield f"data: {json.dumps(final)}\n\n"
            yield "data: [DONE]\n\n"
        except asyncio.CancelledError:
            with self._lock:
                self.disconnects.append(request.url.path)
            raise

    @contextlib.contextmanager
    def running(self) -> Iterator[FakeGateway]:
        server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="critical",
                                               lifespan="off"))
        with uvicorn_in_thread(server, what="fake gateway"):
            yield self


async def _until_disconnect(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _slowly(payload: bytes, pause_s: float) -> Any:
    for index in range(len(payload)):
        yield payload[index:index + 1]
        await asyncio.sleep(pause_s)


class _CutResponse(Response):
    """Declares the whole body's length, sends only part of it, then fails: uvicorn drops the connection."""

    def __init__(self, payload: bytes, cut_after: int, status: int, headers: dict[str, str]) -> None:
        super().__init__(status_code=status, media_type="application/json", headers=headers)
        self._payload = payload
        self._cut_after = cut_after

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(self._payload)).encode())]
        await send({"type": "http.response.start", "status": self.status_code, "headers": headers})
        await send({"type": "http.response.body", "body": self._payload[:self._cut_after], "more_body": True})
        raise ConnectionResetError("scripted cut")


@contextlib.contextmanager
def fake_gateway() -> Iterator[FakeGateway]:
    with FakeGateway().running() as gateway:
        yield gateway
