"""Streamable HTTP: one POST per message; the answer comes back as JSON or as an SSE stream.

- Handshake versions: the `Mcp-Session-Id` the `initialize` answer carries goes on every later
  message, `MCP-Protocol-Version` once negotiated, and `close()` DELETEs the session.
- 2026-07-28 (stateless): no session; every request also carries the routing headers `Mcp-Method`
  and, for tools/call, prompts/get and resources/read, `Mcp-Name` (non-ASCII values in the
  `=?base64?...?=` form the transport defines). The `_meta` envelope is the client's job.
- Once the handshake is done, a GET stream is held open for what the server sends outside any
  request's answer (list changes, notifications of JSON-mode servers); it is re-opened with
  `Last-Event-ID` when it breaks, and given up quietly when the server offers none (405).
- An SSE answer that breaks before our answer arrived is resumed: GET with `Last-Event-ID` (the last
  event id seen) on the same session, a few times with backoff, as the transport spec describes.
- A refusal with a JSON-RPC body (400, 404, ...) is delivered like any answer, so the caller sees the
  server's code and message; 401/403 become `UNAUTHORIZED`, other bodiless failures `SERVER_ERROR`
  with the status.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from typing import Any, Sequence

import aiohttp

from hexmcp.wire import jsonrpc
from hexmcp.wire import sse_events as sse
from hexmcp.core import versions

from ..errors import ClientError, ClientErrorCode, unreachable
from . import aio
from .base import MAX_MESSAGE_BYTES, Inbox, too_large

ACCEPT = "application/json, text/event-stream"
SESSION = "mcp-session-id"
# The body member each method's Mcp-Name header repeats (MCP 2026-07-28, "routing headers").
NAME_MEMBER = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
               "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
RESUME_ATTEMPTS = 3
RESUME_DELAY_S = 0.1
LISTEN_ATTEMPTS = 20
CLOSE_TIMEOUT_S = 2.0


def header_value(value: str) -> str:
    """A routing header value: literal when it is plain printable ASCII, else the base64 sentinel form."""
    if value.isascii() and value.isprintable() and value == value.strip():
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


class HttpWire:
    with_version = True
    require_jsonrpc = True

    def __init__(self, url: str, *, headers: dict[str, str] | None = None,
                 middlewares: Sequence[aiohttp.ClientMiddlewareType] = (),
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        """`middlewares` are aiohttp client middlewares around every request (a test that cuts streams);
        `max_message_bytes` bounds a JSON answer's body and each SSE event, counted in raw bytes."""
        self.url = url
        self.max_message_bytes = max_message_bytes
        self.session_id: str | None = None
        self.version: str | None = None
        self._headers = {"content-type": "application/json", "accept": ACCEPT, **(headers or {})}
        self._middlewares = tuple(middlewares)
        self._http: aiohttp.ClientSession | None = None
        self._inbox: Inbox | None = None
        self._listener: asyncio.Task[None] | None = None

    @property
    def stateless(self) -> bool:
        return self.version in versions.STATELESS_VERSIONS

    async def open(self, inbox: Inbox) -> None:
        self._inbox = inbox
        self._http = aio.new_session(self.url, self._middlewares)

    @property
    def http(self) -> aiohttp.ClientSession:
        assert self._http is not None, "open() first"
        return self._http

    def negotiated(self, version: str) -> None:
        self.version = version
        self._headers["mcp-protocol-version"] = version

    async def initialized(self) -> None:
        if self.session_id is not None and self._listener is None:
            answered = asyncio.Event()
            self._listener = asyncio.ensure_future(self._listen(answered))
            # Connected means listening: a change the server announces right after is not missed.
            waiter = asyncio.ensure_future(answered.wait())
            await asyncio.wait([waiter, self._listener], timeout=aio.CONNECT_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()

    async def _listen(self, answered: asyncio.Event) -> None:
        """The session's GET stream, re-opened after a break until the server refuses it or we close."""
        last_event: str | None = None
        for attempt in range(LISTEN_ATTEMPTS):
            headers = {**self._headers_for({}), "accept": "text/event-stream"}
            if last_event is not None:
                headers["last-event-id"] = last_event
            try:
                async with self.http.get(self.url, headers=headers) as response:
                    answered.set()
                    if response.status != 200:
                        return  # 405: the server sends everything on the answers to our POSTs
                    _, last_event = await self._read_events(response, None)
            except (aiohttp.ClientError, ClientError):
                pass
            await asyncio.sleep(RESUME_DELAY_S * 2 ** min(attempt, 6))

    def _headers_for(self, message: dict[str, Any]) -> dict[str, str]:
        headers = dict(self._headers)
        if self.session_id:
            headers[SESSION] = self.session_id
        method = message.get("method")
        if self.stateless and isinstance(method, str):
            headers["mcp-method"] = header_value(method)
            member = NAME_MEMBER.get(method)
            params = message.get("params")
            if member and isinstance(params, dict) and isinstance(params.get(member), str):
                headers["mcp-name"] = header_value(params[member])
        return headers

    async def send(self, message: dict[str, Any]) -> None:
        waiting_for = message.get("id") if "method" in message else None
        try:
            async with self.http.post(self.url, data=jsonrpc.dumps(message),
                                      headers=self._headers_for(message)) as response:
                if SESSION in response.headers and self.session_id is None:
                    self.session_id = response.headers[SESSION]
                answered, last_event = await self._read(response, waiting_for)
        except aiohttp.ClientError as error:
            raise aio.failed(f"POST {self.url} failed", error) from None
        if waiting_for is not None and not answered:
            await self._resume(waiting_for, last_event)

    async def _read(self, response: aiohttp.ClientResponse, waiting_for: Any) -> tuple[bool, str | None]:
        """Deliver what `response` carries; (whether the answer to `waiting_for` was in it, last SSE id)."""
        kind = response.content_type
        if kind == "text/event-stream":
            return await self._read_events(response, waiting_for)
        body = await aio.read_limited(response, self.max_message_bytes)
        if response.status in (401, 403):
            raise ClientError(ClientErrorCode.UNAUTHORIZED,
                              f"the server refused our credentials (HTTP {response.status})")
        if kind == "application/json" and body:
            try:
                value = jsonrpc.decode(body)
            except ValueError:
                raise ClientError(ClientErrorCode.INCOMPATIBLE, f"HTTP {response.status}: a body that is not JSON") from None
            self._deliver(value)
            return _answers(value, waiting_for), None
        if response.status >= 300:
            text = body.decode(errors="replace").strip()[:200]
            raise ClientError(ClientErrorCode.SERVER_ERROR, f"HTTP {response.status}" + (f": {text}" if text else ""))
        return False, None

    async def _read_events(self, response: aiohttp.ClientResponse, waiting_for: Any) -> tuple[bool, str | None]:
        answered, last_event = False, None
        try:
            events = sse.events(response.content.iter_any(), max_event_bytes=self.max_message_bytes)
            async with contextlib.aclosing(events):
                async for event in events:
                    last_event = event.id or last_event
                    if not event.data:
                        continue  # a priming event: it carries only the id to resume from
                    try:
                        value = jsonrpc.decode(event.data)
                    except ValueError:
                        raise ClientError(ClientErrorCode.INCOMPATIBLE, "an SSE event that is not JSON") from None
                    self._deliver(value)
                    answered = answered or _answers(value, waiting_for)
                    if answered:
                        break
        except aiohttp.ClientError:  # the connection broke mid-stream
            if last_event is None or self.stateless:
                raise  # nothing to resume from (2026-07-28 streams are not resumable)
        except sse.StreamTooLarge:  # leaving the response unread closes its connection, and only that one
            raise too_large("an SSE event from the server (or a line without its end)",
                            self.max_message_bytes) from None
        return answered, last_event

    async def _resume(self, waiting_for: Any, last_event: str | None) -> None:
        """Re-attach to a broken SSE answer with GET + Last-Event-ID until the answer arrives."""
        if last_event is None:
            raise ClientError(ClientErrorCode.INCOMPATIBLE, "the server's response ended without an answer")
        for attempt in range(RESUME_ATTEMPTS):
            await asyncio.sleep(RESUME_DELAY_S * 2 ** attempt)
            headers = {**self._headers_for({}), "accept": "text/event-stream", "last-event-id": last_event}
            try:
                async with self.http.get(self.url, headers=headers) as response:
                    if response.status != 200:
                        raise ClientError(ClientErrorCode.SERVER_ERROR,
                                          f"resuming the answer stream failed: HTTP {response.status}")
                    answered, seen = await self._read_events(response, waiting_for)
            except aiohttp.ClientError:
                continue
            if answered:
                return
            last_event = seen or last_event
        raise unreachable(f"the answer stream broke and could not be resumed after {RESUME_ATTEMPTS} attempts")

    def _deliver(self, value: Any) -> None:
        assert self._inbox is not None, "open() first"
        for message in value if isinstance(value, list) else [value]:  # a 2025-03-26 batch answer
            self._inbox.receive(message)

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
        if self._http is None:
            return
        if self.session_id is not None:
            try:
                async with self._http.delete(self.url, headers=self._headers_for({}),
                                             timeout=aiohttp.ClientTimeout(total=CLOSE_TIMEOUT_S)):
                    pass
            except (aiohttp.ClientError, TimeoutError):
                pass  # the server may be gone already; its session then expires on its own
            self.session_id = None
        await self._http.close()


def _answers(value: Any, request_id: Any) -> bool:
    if request_id is None:
        return False
    messages = value if isinstance(value, list) else [value]
    return any(isinstance(m, dict) and m.get("id") == request_id and "method" not in m for m in messages)
