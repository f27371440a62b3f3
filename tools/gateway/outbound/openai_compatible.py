"""`ChatGateway` for OpenAI-compatible chat-completions APIs (vLLM, OpenAI, LiteLLM, the semantic router).

One `aiohttp.ClientSession` per gateway: pooled HTTP/1.1 connections kept alive between calls (aiohttp
rather than httpx: it spends less CPU per call). A streamed completion (`stream: true`) is
read as server-sent events (httpx-sse's decoder, through `hexmcp.wire.sse_events`), each text piece
handed to the caller as it arrives. Every attempt runs under `with_retries` (retry.py); once text has
reached the caller a broken stream is not retried, since a second attempt would repeat it.
Cancelling the calling task closes the response, which closes its connection: the gateway sees the
client go away and can stop generating.
"""

from __future__ import annotations

import collections
import contextlib
import time
from typing import Any, AsyncIterator
from urllib.parse import urlsplit

import aiohttp
import attrs
import orjson
import structlog
from aiohttp.payload import BytesPayload
from yarl import URL

from hexmcp.wire.sse_events import StreamTooLarge, events

from ..port import ChatAnswer, ChatRequest, GatewayFailure, GatewayModel, TextSink, TokenUsage
from .config import GatewayConfig
from .deadlines import Deadlines
from .failures import Redactor, for_exception, for_status, unusable
from .retry import RetryableFailure, with_retries

log = structlog.get_logger("hexmcp.gateway")

ANTHROPIC_VERSION = "2023-06-01"
MAX_CONNECTIONS = 256
KEEPALIVE_S = 30.0
READ_CHUNK = 64 * 1024
# One streamed event (a chunk of a few tokens, ~200 bytes) never comes near this; a line that does is a
# gateway gone wrong, cut long before the whole answer's cap (max_response_bytes) would be.
SSE_EVENT_LIMIT = 1024 * 1024
NO_CLIENT_TIMER = aiohttp.ClientTimeout(total=None, connect=None, sock_read=None)
# What reading an answer that is not an OpenAI chat completion raises (bad JSON, a missing key, a field
# of the wrong type): the answer is then unusable, never a crash of the tool.
UNUSABLE_ANSWER = (orjson.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError)


class TooLarge(Exception):
    pass


class OpenAICompatibleGateway:
    def __init__(self, config: GatewayConfig) -> None:
        if config.url is None:
            raise ValueError("an OpenAICompatibleGateway needs config.url")
        self.provider = config.provider_type
        self.config = config
        self._redact = Redactor(config.api_key, urlsplit(config.url).password)
        base = config.url.rstrip("/")
        # Parsed once: aiohttp takes a yarl.URL as it is, where a string is parsed again on every call.
        self._chat_url, self._models_url = URL(f"{base}/chat/completions"), URL(f"{base}/models")
        # A streamed answer has no whole-answer deadline: connecting (pool wait included) and each read
        # get TIMEOUT instead (see _client).
        self._stream_timeout = aiohttp.ClientTimeout(total=None, connect=config.timeout_s, sock_read=config.timeout_s)
        # A non-streamed answer and the models list get TIMEOUT as a whole, from one timer for all calls.
        self._deadline = Deadlines(config.timeout_s)
        self._session: aiohttp.ClientSession | None = None  # made on first use, inside the event loop
        # For metrics, read when scraped: calls by (operation, outcome kind), and retries (attempts beyond the first).
        self.calls: collections.Counter[tuple[str, str]] = collections.Counter()
        self.retries = 0

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # No aiohttp timer by default: a non-streamed answer and the models list run whole under
            # TIMEOUT (self._deadline), which starts first and so always ends first; aiohttp's connect and
            # per-read timers (armed, re-armed on every read and cancelled on every call) could never end
            # one. A streamed answer passes _stream_timeout.
            connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_S)
            self._session = aiohttp.ClientSession(headers=_headers(self.config), timeout=NO_CLIENT_TIMER,
                                                  connector=connector, auto_decompress=True)
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()

    # --- the port ------------------------------------------------------------------------------

    async def complete(self, request: ChatRequest, on_text: TextSink | None = None) -> ChatAnswer | GatewayFailure:
        body = _body(request, stream=on_text is not None)
        delivered = False  # text has reached the caller: a retry would repeat it

        async def sink(piece: str) -> None:
            nonlocal delivered
            delivered = True
            assert on_text is not None
            await on_text(piece)

        async def attempt(number: int) -> ChatAnswer | GatewayFailure:
            try:
                if on_text is None:
                    async with self._deadline():
                        return await self._post(body, request.model, number, None)
                return await self._post(body, request.model, number, sink)
            except aiohttp.ClientError as error:  # before TimeoutError: aiohttp's own timeouts are both
                return self._transport_failure(error, number, delivered)
            except TimeoutError as error:  # the whole answer took longer than TIMEOUT
                return self._transport_failure(error, number, False)

        started = time.perf_counter()
        outcome = await with_retries(self.config.retries, attempt, on_retry=self._log_retry)
        self._log_outcome("chat completion", outcome, started, model=request.model)
        return outcome

    async def list_models(self) -> tuple[GatewayModel, ...] | GatewayFailure:
        async def attempt(number: int) -> tuple[GatewayModel, ...] | GatewayFailure:
            try:
                async with self._deadline():
                    response = await self._client().get(self._models_url, allow_redirects=False)
                    try:
                        raw = await self._read_limited(response)
                        if response.status >= 300:
                            return self._status_failure(response, raw, None, number)
                        return _models(orjson.loads(raw))
                    finally:
                        if not response.closed:  # see _post
                            response.release()
            except aiohttp.ClientError as error:
                return self._transport_failure(error, number, False)
            except TimeoutError as error:
                return self._transport_failure(error, number, False)
            except TooLarge:
                return attrs.evolve(self._too_large(response.status), attempts=number)
            except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
                return unusable("the gateway's models list is not the OpenAI shape ({data: [{id}]})",
                                response.status, self._redact)

        started = time.perf_counter()
        outcome = await with_retries(self.config.retries, attempt, on_retry=self._log_retry)
        self._log_outcome("models list", outcome, started)
        return outcome

    # --- one attempt -------------------------------------------------------------------------------

    async def _post(self, body: dict[str, Any], model: str, number: int, sink: TextSink | None) -> ChatAnswer | GatewayFailure:
        # Redirects are never followed: the session's headers carry the API key (Authorization, and
        # x-api-key for Anthropic), and a hop to another origin would hand it over (aiohttp drops only
        # Authorization). A 3xx is a failure naming where it pointed (failures.for_status).
        # The content type rides on the payload, so no per-call headers are merged into the session's.
        payload = BytesPayload(orjson.dumps(body), content_type="application/json")
        timeout = self._stream_timeout if sink is not None else NO_CLIENT_TIMER
        # Awaited, and released in `finally` only if still open, rather than entered with `async with`,
        # whose exit releases it again and awaits the request's body writer through two more coroutines
        # (ADR 1209). An answer read to its end has already handed its connection back to the pool (aiohttp
        # does so at the end of the body: `closed`); one left unread (an early return, a refusal, a
        # cancellation) is released here, which closes its connection: a caller that goes away still
        # closes the gateway's connection.
        response = await self._client().post(self._chat_url, data=payload, allow_redirects=False, timeout=timeout)
        try:
            if response.status >= 300:
                return self._status_failure(response, await self._read_limited(response), model, number)
            streaming = sink is not None and response.headers.get("content-type", "").startswith("text/event-stream")
            if streaming:
                assert sink is not None
                return await self._read_stream(response, sink, number)
            answer = _answer(orjson.loads(await self._read_limited(response)), number)
            if sink is not None and answer.text:
                await sink(answer.text)  # a gateway that ignored `stream: true`: one piece
            return answer
        except TooLarge:
            return attrs.evolve(self._too_large(response.status), attempts=number)
        except UNUSABLE_ANSWER:
            return attrs.evolve(unusable("the gateway's answer is not an OpenAI chat completion",
                                         response.status, self._redact), attempts=number)
        finally:
            if not response.closed:
                response.release()

    async def _read_stream(self, response: aiohttp.ClientResponse, sink: TextSink, number: int) -> ChatAnswer | GatewayFailure:
        """The raw bytes are capped (the whole answer at max_response_bytes, one event at SSE_EVENT_LIMIT),
        so a line that never ends is refused as it grows, not held until it does."""
        limit = self.config.max_response_bytes
        stream = events(response.content.iter_any(), max_total_bytes=limit,
                        max_event_bytes=min(SSE_EVENT_LIMIT, limit))
        try:
            async with contextlib.aclosing(stream):
                return await self._gather_stream(stream, response.status, sink, number)
        except StreamTooLarge as error:
            return attrs.evolve(unusable(f"the gateway's streamed answer was refused: {error}", response.status,
                                         self._redact), attempts=number)

    async def _gather_stream(self, stream: AsyncIterator[Any], status: int, sink: TextSink,
                             number: int) -> ChatAnswer | GatewayFailure:
        pieces: list[str] = []
        model, finish, usage = "", None, TokenUsage()
        done = False
        async for event in stream:
            if event.data.strip() == "[DONE]":
                done = True
                break
            chunk = orjson.loads(event.data)
            if "error" in chunk:
                return unusable(f"the gateway failed mid-stream: {_error_message(chunk)}", status, self._redact)
            model = _text_or_none(chunk.get("model") or None) or model
            if chunk.get("usage"):
                usage = _usage(chunk["usage"])
            for choice in chunk.get("choices") or []:
                finish = _text_or_none(choice.get("finish_reason") or None) or finish
                piece = _text_or_none((choice.get("delta") or {}).get("content") or None)
                if piece:
                    pieces.append(piece)
                    await sink(piece)
        if not done and finish is None:
            # The stream ended cleanly but before its end: neither [DONE] nor a finish_reason came. What
            # arrived is not the answer (a line without its newline is dropped, as the SSE rules say), so
            # this is a failure, never a success with whatever text (often none) had arrived.
            return attrs.evolve(unusable(f"the gateway's stream ended before the answer did ({len(pieces)} "
                                         "pieces, no finish_reason, no [DONE])", status, self._redact),
                                attempts=number)
        return ChatAnswer(text="".join(pieces), model=model, usage=usage, finish_reason=finish, attempts=number)

    async def _read_limited(self, response: aiohttp.ClientResponse) -> bytes:
        """The body, refusing (TooLarge) as soon as it passes max_response_bytes: never held whole in memory."""
        limit = self.config.max_response_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit():
            if int(declared) > limit:
                raise TooLarge()
            if response.headers.get("content-encoding", "identity") == "identity":
                # The parser stops at the declared length, so no chunk loop is needed; a compressed body
                # may grow past its declared length as it is decoded, so it is counted chunk by chunk.
                return await response.read()
        chunks: list[bytes] = []
        size = 0
        read = response.content.read  # read(n) as iter_chunked does, without its iterator and StopAsyncIteration
        while chunk := await read(READ_CHUNK):
            size += len(chunk)
            if size > limit:
                raise TooLarge()
            chunks.append(chunk)
        return b"".join(chunks)

    # --- failures --------------------------------------------------------------------------------

    def _status_failure(self, response: aiohttp.ClientResponse, raw: bytes, model: str | None,
                        number: int) -> GatewayFailure:
        try:
            message = _error_message(orjson.loads(raw))
        except (orjson.JSONDecodeError, TypeError, AttributeError):
            message = raw[:200].decode("utf-8", "replace").strip() or None
        failure = for_status(response.status, message, response.headers, model=model, redact=self._redact)
        if isinstance(failure, RetryableFailure):
            failure.failure = attrs.evolve(failure.failure, attempts=number)
            raise failure
        return attrs.evolve(failure, attempts=number)

    def _transport_failure(self, error: aiohttp.ClientError | TimeoutError, number: int, delivered: bool) -> GatewayFailure:
        failure = for_exception(error, self._redact)
        if delivered:  # part of the answer already went out: stop here rather than repeat it
            return attrs.evolve(failure.failure, attempts=number)
        raise failure

    def _too_large(self, status: int) -> GatewayFailure:
        return unusable(f"the gateway's answer is larger than the {self.config.max_response_bytes}-byte limit",
                        status, self._redact)

    def _log_retry(self, error: RetryableFailure, attempt: int, wait_s: float) -> None:
        self.retries += 1
        log.warning("gateway call failed, retrying", kind=error.failure.kind.name.lower(), status=error.failure.status,
                    attempt=attempt, wait_s=round(wait_s, 3), reason=error.failure.message)

    def _log_outcome(self, what: str, outcome: Any, started: float, **fields: Any) -> None:
        latency_ms = round((time.perf_counter() - started) * 1000, 1)
        self.calls[what, outcome.kind.name.lower() if isinstance(outcome, GatewayFailure) else "ok"] += 1
        if isinstance(outcome, GatewayFailure):
            log.warning(f"{what} failed", kind=outcome.kind.name.lower(), code=outcome.code, status=outcome.status,
                        attempts=outcome.attempts, reason=outcome.message, latency_ms=latency_ms,
                        eventId=outcome.event_id, **fields)
        else:
            log.debug(f"{what} done", latency_ms=latency_ms, **fields)


def _headers(config: GatewayConfig) -> dict[str, str]:
    headers = {"accept": "application/json, text/event-stream", "user-agent": "hexmcp-gateway"}
    if config.api_key:
        headers["authorization"] = f"Bearer {config.api_key}"
        if config.provider_type == "anthropic":  # Anthropic's OpenAI-compatible endpoint also reads these
            headers["x-api-key"] = config.api_key
            headers["anthropic-version"] = ANTHROPIC_VERSION
    return headers


def _body(request: ChatRequest, *, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": request.model,
                            "messages": [{"role": m.role, "content": m.content} for m in request.messages]}
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if request.reasoning_effort is not None:
        body["reasoning_effort"] = request.reasoning_effort
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}  # the last chunk then carries the token counts
    return body


# An answer is checked here, field by field, as it is read: what routeCompletion builds from a ChatAnswer
# then always fits its output schema (tests/tools/gateway/test_route_completion_output.py holds that for
# any JSON an upstream may send), so the tool's result is not checked again on every call (ADR 1206).
# A field of the wrong type makes the answer unusable (TypeError: "not an OpenAI chat completion").
# orjson writes integers of 64 bits at most: a count (or the sum of two) past that could not be sent on.
MAX_COUNT = 2 ** 62


def _answer(document: dict[str, Any], number: int) -> ChatAnswer:
    choice = document["choices"][0]
    text = (choice.get("message") or {}).get("content") or ""
    if not isinstance(text, str):
        raise TypeError("content is not text")
    return ChatAnswer(text=text, model=str(document.get("model") or ""), usage=_usage(document.get("usage") or {}),
                      finish_reason=_text_or_none(choice.get("finish_reason")), attempts=number)


def _text_or_none(value: Any) -> str | None:
    if value is None or type(value) is str:
        return value
    raise TypeError("a text field holds something else")


def _usage(raw: dict[str, Any]) -> TokenUsage:
    prompt = _count(raw.get("prompt_tokens"))
    completion = _count(raw.get("completion_tokens"))
    return TokenUsage(prompt_tokens=prompt, completion_tokens=completion,
                      total_tokens=_count(raw.get("total_tokens")) or prompt + completion)


def _count(value: Any) -> int:
    """A token count: an integer, or a number or numeric string taken as one (as `int()` reads it)."""
    if not value:
        return 0
    try:
        count = int(value)
    except (ValueError, OverflowError):  # "many", inf, nan
        raise TypeError("a token count is not a number") from None
    if not -MAX_COUNT <= count <= MAX_COUNT:
        raise TypeError("a token count is out of range")
    return count


def _models(document: dict[str, Any]) -> tuple[GatewayModel, ...]:
    return tuple(GatewayModel(id=str(item["id"]), owned_by=item.get("owned_by")) for item in document["data"])


def _error_message(document: Any) -> str | None:
    """The gateway's one-line explanation: OpenAI's `{"error": {"message"}}`, or `{"detail"}`, `{"message"}`."""
    if not isinstance(document, dict):
        return None
    error = document.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or "") or None
    if isinstance(error, str):
        return error
    for key in ("detail", "message"):
        if isinstance(document.get(key), str):
            return document[key]
    return None
