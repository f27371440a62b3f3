"""Streamable HTTP for the handshake versions (2024-11-05 … 2025-11-25): sessions, POST, GET, DELETE.

POST carries client messages. Requests are answered as `application/json`, or as an SSE stream when
the handler sends something first (see `sse.Reply`); notifications and responses (answers to our
sampling/elicitation requests) get 202. `initialize` mints the `Mcp-Session-Id`; a request that carries
one unknown or ended gets 404. A POST with no session id (a router's one-shot call) is served one-shot, as
in stateless mode; GET and DELETE without one get 400. GET opens the session's standalone stream, or
with `Last-Event-ID` resumes a broken one. DELETE ends the session.

In stateless mode there are no sessions: each POST is served by a fresh core session that assumes
the version named by the `MCP-Protocol-Version` header, so instances behind a load balancer need
share nothing but the requestState secret. GET and DELETE are then 405.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any, Awaitable

from hexmcp.core import ErrorCode, McpServer, Ok, Outcome, Rejection, Session, versions
from hexmcp.wire import jsonrpc
from hexmcp.wire.deadlines import Deadlines
from hexmcp.wire.pending import PendingRequests

from .. import rpc_layer
from ..held_open import HeldOpen
from ..retry_hint import retry_after_header
from . import dispatch
from .address_group import held_key
from .asgi import RawHeaders, Receive, Send
from .client_identity import client_identity
from .config import HttpConfig
from .disconnects import GONE, unless_gone, until_done_or_gone
from .headers import check_body_version
from .held_streams import HeldGetStream
from .json_body import json_body, readable_id
from .limits import ConcurrencyLimit, release_slot
from .peer import HttpPeer
from .refusals import Refused, refuse
from .request import HttpRequest
from .responses import respond_json
from .sessions import HttpSession, SessionStore
from .sse import EventStream, Reply, event_position
from .status import http_status, rpc_status

SESSION_HEADER = b"mcp-session-id"
ALLOW = [(b"allow", b"GET, POST, DELETE")]
ALLOW_STATELESS = [(b"allow", b"POST")]
# A POST without MCP-Protocol-Version comes from a client that predates the header (spec: assume this).
HEADERLESS_VERSION = versions.V2025_03_26
# Priming events and `retry:` (SEP-1699) exist from this version on.
PRIMING_SINCE = versions.V2025_11_25
# A sessionless, headerless POST in session mode comes from a router that skipped the handshake
# (vLLM semantic-router "Style 1"): it gets the newest handshake version, as if it had just initialized.
SESSIONLESS_VERSION = versions.LATEST_HANDSHAKE_VERSION


class HandshakeEraTransport:
    def __init__(self, server: McpServer, config: HttpConfig, sessions: SessionStore,
                 streams: HeldOpen | None = None) -> None:
        self.server = server
        self.config = config
        self.sessions = sessions
        # One table for every sessionless POST: answers come back on other POSTs, from any client, so the
        # ids must be ones only the asked client has seen.
        self.stateless_pending = rpc_layer.pending_requests(shared=True)
        self._stateless_ids = itertools.count(1)
        self.streams = streams if streams is not None else HeldOpen(
            what="open streams", per_client=config.max_streams_per_client, total=config.max_streams)
        self.deadlines = Deadlines(config.request_timeout_s)

    def handle(self, request: HttpRequest, receive: Receive, send: Send, header_version: str | None) -> Awaitable[None]:
        """The awaitable that answers the request (returned, not awaited here: no frame for a switch)."""
        method = request.scope["method"]
        if method == "POST":
            return self.post(request, receive, send, header_version)
        if method == "GET" and not self.config.stateless:
            return self.get(request, receive, send)
        if method == "DELETE" and not self.config.stateless:
            return self.delete(request, send)
        return refuse(send, ErrorCode.INVALID_REQUEST, f"Method not allowed: {method}", status=405,
                      headers=ALLOW_STATELESS if self.config.stateless else ALLOW)

    # --- POST ------------------------------------------------------------------------------------

    async def post(self, request: HttpRequest, receive: Receive, send: Send, header_version: str | None) -> None:
        read = self._read_messages(request, send)
        if type(read) is Refused:
            await read.answer
            return
        messages, batch, json_ok = read  # type: ignore[misc]
        first = messages[0]
        if not batch and type(first) is jsonrpc.Request and first.params:
            problem = check_body_version(header_version, first.params)
            if problem is not None:
                code, text, data = problem
                await refuse(send, code, text, data=data, request_id=first.id, status=rpc_status(code))
                return
        if self.config.stateless:
            await self._post_stateless(request, receive, send, messages, batch, header_version, json_ok)
            return
        raw_id = request.header(SESSION_HEADER)
        if raw_id is None and (batch or not isinstance(first, jsonrpc.Request) or first.method != "initialize"):
            # A sessionless POST (a router's one-shot tools/call) is served like stateless
            # mode serves every POST; the spec's 400 here is a SHOULD, and no conformance check asks it.
            await self._post_one_shot(request, receive, send, messages, batch, header_version or SESSIONLESS_VERSION,
                                      json_ok)
            return
        # Echo the request's id in refusals when it could be read; only unreadable ids are null.
        first_id = first.id if not batch and isinstance(first, jsonrpc.Request) else None
        if raw_id is None:
            session, created = await self._new_session(request, send, first_id), True
        else:  # the session posted to: every request's lookup, written out rather than awaited
            session, created = _owned(self.sessions.get(raw_id.decode("latin-1")), request), False
            if session is None:
                await refuse(send, ErrorCode.SESSION_NOT_FOUND, "Session not found: initialize a new session",
                             request_id=first_id)
        if session is None:
            return
        if batch and not _batching(session.core.version):
            await refuse(send, ErrorCode.INVALID_REQUEST,
                         f"JSON-RPC batches are not allowed in protocol version {session.core.version}")
            return
        session.active += 1
        try:
            answered = await self._serve(send, session.core, session.peer, session.pending, messages, batch,
                                         json_ok=json_ok, make_stream=session.new_stream, session_id=session.id,
                                         announce=created, task=request.serving_task(), slots=request.slot)
        except asyncio.CancelledError:
            if not session.peer.closed:
                raise
            # The session ended (a DELETE, expiry) while this POST was served: closing it cancelled the
            # request and closed its stream. That is the client's doing, not a failure of the server's,
            # so it must not reach uvicorn as an "Exception in ASGI application".
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                current.uncancel()
            # A POST answered as JSON had not begun its answer: it gets the session's 404. One on SSE
            # already ended with its stream, and uvicorn refuses a second start (RuntimeError).
            with contextlib.suppress(RuntimeError):
                await refuse(send, ErrorCode.SESSION_NOT_FOUND, "Session ended while the request was served",
                             request_id=first_id)
            return
        finally:
            session.active -= 1
            session.touch()
        if created and not answered:
            await self.sessions.remove(session.id)  # initialize failed: no session to keep

    def _read_messages(self, request: HttpRequest,
                       send: Send) -> tuple[list[jsonrpc.Message], bool, bool] | Refused:
        """A POST's messages, whether they came as a batch, and whether the client accepts JSON; or the
        refusal of the POST (an Accept naming neither JSON nor SSE, a body that is not JSON, an empty or
        oversized batch)."""
        json_ok, sse_ok = request.accepts()
        if not (json_ok or sse_ok):
            return Refused(refuse(send, ErrorCode.INVALID_REQUEST,
                                  "Not Acceptable: the client must accept application/json or text/event-stream",
                                  status=406, request_id=readable_id(request)))
        value = json_body(request, send)
        if type(value) is Refused:
            return value
        batch = isinstance(value, list)
        if batch and not value:
            return Refused(refuse(send, ErrorCode.INVALID_REQUEST, "Invalid request: empty batch"))
        if batch and len(value) > self.config.max_batch_messages:
            return Refused(refuse(send, ErrorCode.INVALID_REQUEST,
                                  f"Invalid request: a batch of {len(value)} messages; this server takes at most "
                                  f"{self.config.max_batch_messages} in one batch", status=400))
        messages = [jsonrpc.classify(item) for item in value] if batch else [jsonrpc.classify(value)]
        return messages, batch, json_ok

    async def _new_session(self, request: HttpRequest, send: Send, first_id: Any) -> HttpSession | None:
        """The session an initialize without a session id opens; None after refusing the POST (too many
        sessions)."""
        client = client_identity(request)
        created = await self.sessions.create(client)
        if created is None:
            cap = self.config.max_sessions_per_client
            message = (f"Too many sessions for this client: its {cap} sessions are all busy; end one (DELETE) "
                       "or retry later" if self.sessions.held_by(client) >= cap else "Too many sessions: retry later")
            await refuse(send, ErrorCode.SERVER_BUSY, message, headers=[(b"retry-after", b"5")], request_id=first_id)
        return created

    async def _post_stateless(self, request: HttpRequest, receive: Receive, send: Send, messages: list[jsonrpc.Message],
                              batch: bool, header_version: str | None, json_ok: bool) -> None:
        await self._post_one_shot(request, receive, send, messages, batch, header_version or HEADERLESS_VERSION, json_ok)

    async def _post_one_shot(self, request: HttpRequest, receive: Receive, send: Send, messages: list[jsonrpc.Message],
                             batch: bool, version: str, json_ok: bool) -> None:
        """Serve one POST with a fresh core session that assumes `version` (or runs the handshake it carries).

        Unlike a session's POST, whose stream a client may resume (so leaving is not cancelling, as the spec
        says), a one-shot POST's answer has nowhere else to go: a client that leaves first has its work
        cancelled, as the REST dialect and the 2026 era do."""
        if batch and not _batching(version):
            await refuse(send, ErrorCode.INVALID_REQUEST,
                         f"JSON-RPC batches are not allowed in protocol version {version}")
            return
        first = messages[0]
        handshake = not batch and isinstance(first, jsonrpc.Request) and first.method == "initialize"
        peer = HttpPeer(pending=self.stateless_pending, timeout_s=self.config.client_request_timeout_s)
        core = self.server.open_session(session_id=f"stateless-{next(self._stateless_ids)}", peer=peer,
                                        assume_version=None if handshake else version,
                                        client_id=client_identity(request), transport="http")
        outcome = await unless_gone(request, receive, lambda task: self._serve(
            send, core, peer, self.stateless_pending, messages, batch, json_ok=json_ok,
            make_stream=lambda: EventStream(None), session_id=None, announce=False, task=task, slots=request.slot))
        if outcome is GONE:
            await core.close()

    def _serve(self, send: Send, core: Session, peer: HttpPeer, pending: PendingRequests,
               messages: list[jsonrpc.Message], batch: bool, *, json_ok: bool, make_stream: Any,
               session_id: str | None, announce: bool, task: asyncio.Task[Any] | None,
               slots: ConcurrencyLimit | None = None) -> Awaitable[bool]:
        """Answer one POST's messages; True when every request in it succeeded. `task`: the request's own
        (`HttpRequest.serving_task`), which a single request runs in. `slots`: the concurrency cap whose slot
        the POST holds, which a batch's further requests take slots of too (None: not capped). A plain function
        returning the awaitable: a POST of one request (the hot path) goes to `_serve_one` with no frame here."""
        if not batch and isinstance(messages[0], jsonrpc.Request):  # one request: no lists, no gather
            reply, headers = _reply(send, core, make_stream, session_id, announce, json_ok)
            return self._serve_one(send, core, peer, reply, headers, messages[0], task)
        return self._serve_messages(send, core, peer, pending, messages, batch, json_ok=json_ok,
                                    make_stream=make_stream, session_id=session_id, announce=announce, task=task,
                                    slots=slots)

    async def _serve_messages(self, send: Send, core: Session, peer: HttpPeer, pending: PendingRequests,
                              messages: list[jsonrpc.Message], batch: bool, *, json_ok: bool, make_stream: Any,
                              session_id: str | None, announce: bool, task: asyncio.Task[Any] | None,
                              slots: ConcurrencyLimit | None) -> bool:
        """`_serve` for a batch, or a single message that is not a request (a notification, an answer)."""
        requests, errors = await self._sort(core, pending, messages)
        if not requests:
            if errors and not batch:
                await respond_json(send, http_status(ErrorCode.INVALID_REQUEST), jsonrpc.dumps(errors[0]))
            elif errors:
                await respond_json(send, 400, jsonrpc.dumps(errors))
            else:
                await _accepted(send)
            return True
        reply, headers = _reply(send, core, make_stream, session_id, announce, json_ok)
        if not batch:
            return await self._serve_one(send, core, peer, reply, headers, requests[0], task)
        return await self._serve_batch(core, peer, reply, headers, requests, errors, slots)

    async def _serve_one(self, send: Send, core: Session, peer: HttpPeer, reply: Reply, headers: RawHeaders,
                         request: jsonrpc.Request, task: asyncio.Task[Any] | None) -> bool:
        """`_serve` for a POST of one request. `headers`: the answer's, which `reply` holds (a session id to
        announce, or none)."""
        # A request reusing the id of one in flight is refused by the core; it must not take the first's
        # stream (its progress and questions) from it, nor remove it when refused.
        own = peer.replies.setdefault(request.id, reply) is reply
        try:
            outcome = await dispatch.run(core, request, self.deadlines, task)
        finally:
            if own:
                peer.replies.pop(request.id, None)
        succeeded = isinstance(outcome, Ok)
        if not succeeded and not reply.streaming:
            headers.clear()  # a failed initialize keeps no session: don't name one
        answer = rpc_layer.answer(request.id, outcome)
        if answer is not None:
            await (reply.finish(answer) if succeeded else reply.finish(answer, *_rate_limited(outcome)))
        elif reply.streaming:
            await reply.stream.close()  # type: ignore[union-attr]
        else:
            await _accepted(send)
        return succeeded

    async def _serve_batch(self, core: Session, peer: HttpPeer, reply: Reply, headers: RawHeaders,
                           requests: list[jsonrpc.Request], errors: list[dict[str, Any]],
                           slots: ConcurrencyLimit | None) -> bool:
        """`_serve` for a batch: its requests run side by side, and their answers follow `errors`, the
        answers to the batch's invalid messages. The POST's slot serves the first request; each further one
        takes a slot of its own, or is answered -32005 (busy) when the cap is reached."""
        taken = 0
        if slots is not None:
            admitted = requests[:1]
            for request in requests[1:]:
                if slots.acquire():
                    taken += 1
                    admitted.append(request)
                else:
                    errors.append(rpc_layer.error_reply(request.id, ErrorCode.SERVER_BUSY, slots.busy_message()))
            requests = admitted
        owned = [request.id for request in requests if peer.replies.setdefault(request.id, reply) is reply]
        try:
            outcomes = list(await asyncio.gather(*(dispatch.run_in_own_task(core, r, self.deadlines) for r in requests)))
        finally:
            for _ in range(taken):
                slots.release()  # type: ignore[union-attr]
            for request_id in owned:
                peer.replies.pop(request_id, None)
        answers = [a for a in (rpc_layer.answer(r.id, o) for r, o in zip(requests, outcomes)) if a is not None]
        succeeded = all(isinstance(o, Ok) for o in outcomes)
        if not succeeded and not reply.streaming:
            headers.clear()
        await reply.finish_many([*errors, *answers])
        return succeeded

    async def _sort(self, core: Session, pending: PendingRequests,
                    messages: list[jsonrpc.Message]) -> tuple[list[jsonrpc.Request], list[dict[str, Any]]]:
        """A POST's messages: the requests to answer, and the answers to the invalid ones; notifications
        are served and the client's responses handed to the requests waiting for them on the way."""
        requests: list[jsonrpc.Request] = []
        errors: list[dict[str, Any]] = []
        for message in messages:
            if isinstance(message, jsonrpc.Request):
                requests.append(message)
            elif isinstance(message, jsonrpc.Notification):
                await rpc_layer.serve_notification(core, message, rpc_layer.HTTP_TRACES.next())
            elif isinstance(message, jsonrpc.Response):
                with rpc_layer.bound(core.session_id, rpc_layer.HTTP_TRACES.next()):  # a stray answer's log names its session
                    rpc_layer.take_answer(pending, message)
            else:
                assert isinstance(message, jsonrpc.Invalid)
                errors.append(rpc_layer.invalid_reply(message))
        return requests, errors

    # --- GET: the standalone stream, or resumption ------------------------------------------------

    async def get(self, request: HttpRequest, receive: Receive, send: Send) -> None:
        _, sse_ok = request.accepts()
        if not sse_ok:
            await refuse(send, ErrorCode.INVALID_REQUEST, "Not Acceptable: GET needs Accept: text/event-stream",
                         status=406)
            return
        session = await self._session_for(request, send)
        if session is None:
            return
        client = held_key(client_identity(request))
        held = HeldGetStream(session)
        refused = self.streams.take(client, held)
        if refused is not None:
            await refuse(send, ErrorCode.SERVER_BUSY, refused, headers=[(b"retry-after", b"5")])
            return
        try:
            await self._stream(request, receive, send, session, held)
        finally:
            self.streams.give(client, held)

    async def _stream(self, request: HttpRequest, receive: Receive, send: Send, session: HttpSession,
                      held: HeldGetStream) -> None:
        last_event_id = request.header(b"last-event-id")
        resumed = None
        if last_event_id and last_event_id.strip():
            position = event_position(last_event_id)
            if position is None:
                await refuse(send, ErrorCode.INVALID_REQUEST,
                             "Bad Request: Last-Event-ID must be an event id this server sent (<stream>_<number>)")
                return
            resumed = session.find_event(*position)
        if resumed is not None:
            stream, after = resumed
            await stream.attach(send, [], after)
        else:
            current = session.peer.standalone
            if current is not None and current.attached and not current.finished.is_set():
                await refuse(send, ErrorCode.INVALID_REQUEST, "Conflict: this session already has a GET stream open",
                             status=409)
                return
            stream = session.new_stream()
            session.peer.standalone = stream
            version = session.core.version or versions.LATEST_HANDSHAKE_VERSION
            await stream.open(send, [], priming=version >= PRIMING_SINCE)
        release_slot(request)
        session.active += 1
        held.attach(stream, send)
        try:
            await hold_open(stream, receive, self.config.keepalive_s)
        finally:
            session.active -= 1
            session.touch()
            stream.detach(send)

    # --- DELETE ----------------------------------------------------------------------------------

    async def delete(self, request: HttpRequest, send: Send) -> None:
        session = await self._session_for(request, send)
        if session is None:
            return
        await self.sessions.remove(session.id)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def _session_for(self, request: HttpRequest, send: Send) -> HttpSession | None:
        raw_id = request.header(SESSION_HEADER)
        if raw_id is None:
            await refuse(send, ErrorCode.INVALID_REQUEST, "Bad Request: Mcp-Session-Id header is required")
            return None
        session = _owned(self.sessions.get(raw_id.decode("latin-1")), request)
        if session is None:
            await refuse(send, ErrorCode.SESSION_NOT_FOUND, "Session not found: initialize a new session")
        return session


def _reply(send: Send, core: Session, make_stream: Any, session_id: str | None, announce: bool,
           json_ok: bool) -> tuple[Reply, RawHeaders]:
    """How a POST's answers go out, and the headers they carry (a session id to announce, or none)."""
    headers = [(b"mcp-session-id", session_id.encode())] if announce and session_id else []
    version = core.version or versions.LATEST_HANDSHAKE_VERSION
    # Positional: a class called with keywords packs them into a dict and unpacks it again, on every POST.
    return Reply(send, headers, make_stream, session_id is not None and version >= PRIMING_SINCE, json_ok), headers


def _owned(session: HttpSession | None, request: HttpRequest) -> HttpSession | None:
    """The session, if the authenticated caller is the one that opened it: a session id alone must not let
    another principal into it (answered as an unknown session, so ids cannot be probed). Without
    authentication there is nobody to compare: the id is the credential."""
    if session is None or request.principal is None or session.core.client_id == client_identity(request):
        return session
    return None


async def hold_open(stream: EventStream, receive: Receive, keepalive_s: float) -> None:
    """Keep a long-lived SSE response open until the stream ends, a resumer takes it over, or the client
    goes, with keep-alives. Called right after the stream was opened or attached on this connection, so
    `stream.replaced` is still this connection's event."""
    finished = asyncio.ensure_future(stream.finished.wait())
    replaced = asyncio.ensure_future(stream.replaced.wait())
    either = asyncio.ensure_future(asyncio.wait({finished, replaced}, return_when=asyncio.FIRST_COMPLETED))
    try:
        await until_done_or_gone(either, receive, keepalive_s=keepalive_s, keepalive=stream.comment)
    finally:
        for waiter in (either, finished, replaced):
            waiter.cancel()


async def _accepted(send: Send) -> None:
    """202 with no body: what a POST of nothing but notifications and responses gets."""
    await send({"type": "http.response.start", "status": 202, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def _batching(version: str | None) -> bool:
    return version is not None and version in versions.FEATURES and versions.features(version).batching


def _rate_limited(outcome: Outcome) -> tuple[int, RawHeaders]:
    """The status and headers of a single answer: 200 as ever on this era (its clients read errors from the
    body), except a rate limit, which is 429 with `Retry-After` on every era (status.py), so HTTP clients
    and proxies back off without parsing JSON-RPC."""
    if isinstance(outcome, Rejection) and outcome.code is ErrorCode.RATE_LIMITED:
        return rpc_status(outcome.code), retry_after_header(outcome.data)
    return 200, []
