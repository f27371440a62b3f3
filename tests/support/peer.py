"""An in-memory `Peer` for driving the core with no wire, and a small client around a `Session`.

`RecordingPeer` keeps every notification and server-to-client request the core sends, checks each
against the official schema of the session's version, and answers requests with whatever the test
scripted. `CoreClient` sends requests and notifications the way an adapter would and checks every
`Ok` result against the schema.
"""

from __future__ import annotations

import itertools
from typing import Any, Awaitable, Callable

import attrs

from hexmcp.core import ErrorCode, McpServer, Ok, Outcome, PeerRequestFailed, Rejection, Session, versions
from hexmcp.core.meta import (META_CLIENT_CAPABILITIES, META_ERROR_CODE, META_ERROR_DATA, META_EVENT_ID,
                              META_PROTOCOL_VERSION)

from . import schemas

Answer = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


@attrs.frozen
class Sent:
    method: str
    params: dict[str, Any]
    related: Any


class RecordingPeer:
    def __init__(self, answer: Answer | None = None) -> None:
        self.notifications: list[Sent] = []
        self.requests: list[Sent] = []
        self.answer = answer
        self.version: str = versions.LATEST_HANDSHAKE_VERSION  # the client sets it once it knows
        self._ids = itertools.count(1)

    async def notify(self, method: str, params: dict[str, Any], *, related: Any) -> None:
        schemas.validate_notification(self.version, {"jsonrpc": "2.0", "method": method, "params": params})
        self.notifications.append(Sent(method, params, related))

    async def request(self, method: str, params: dict[str, Any], *, related: Any) -> dict[str, Any]:
        schemas.validate_server_request(self.version, {"jsonrpc": "2.0", "id": f"s-{next(self._ids)}",
                                                       "method": method, "params": params})
        self.requests.append(Sent(method, params, related))
        if self.answer is None:
            raise PeerRequestFailed("this test's client answers no requests")
        return await self.answer(method, params)

    def notified(self, method: str) -> list[dict[str, Any]]:
        return [n.params for n in self.notifications if n.method == method]


class CoreClient:
    """Speaks to one `Session` as an adapter would; every `Ok` result is schema-checked."""

    def __init__(self, server: McpServer, peer: RecordingPeer | None = None, *, session_id: str = "test") -> None:
        self.peer = peer or RecordingPeer()
        self.session: Session = server.open_session(session_id=session_id, peer=self.peer)
        self._keys = itertools.count(1)

    async def request(self, method: str, params: Any = None, *, key: Any = None) -> Outcome:
        key = next(self._keys) if key is None else key
        outcome = await self.session.handle_request(method, params, request_key=key, trace_id=f"t-{key}")
        if isinstance(outcome, Ok):
            schemas.validate_result(self._version_of(params), method, outcome.result, request_id=key)
        return outcome

    async def ok(self, method: str, params: Any = None, *, key: Any = None) -> dict[str, Any]:
        outcome = await self.request(method, params, key=key)
        assert isinstance(outcome, Ok), f"{method} was rejected: {outcome}"
        return outcome.result

    async def rejected(self, method: str, params: Any = None, *, key: Any = None) -> Rejection:
        outcome = await self.request(method, params, key=key)
        assert isinstance(outcome, Rejection), f"{method} was not rejected: {outcome}"
        return outcome

    async def refused_arguments(self, params: dict[str, Any], *, key: Any = None) -> Rejection:
        """A tools/call whose arguments are refused, held to its version's form: -32602 up to 2025-06-18, an
        isError result from 2025-11-25 on (SEP-1303) whose text is the refusal's message with its eventId and
        whose `_meta` carries the eventId, `invalid_params` and the refusal's data. Returned as the Rejection a
        -32602 carries either way, so one test states what is refused on every version."""
        outcome = await self.request("tools/call", params, key=key)
        version = self._version_of(params)
        if not versions.features(version).argument_errors_as_results:
            assert isinstance(outcome, Rejection), f"tools/call was not rejected on {version}: {outcome}"
            return outcome
        assert isinstance(outcome, Ok), f"arguments refused as -32602 on {version}: {outcome}"
        result = outcome.result
        assert result["isError"] is True, result
        [block] = result["content"]
        meta = result["_meta"]
        event_id = meta[META_EVENT_ID]
        suffix = f" (eventId {event_id})"
        assert block["type"] == "text" and block["text"].endswith(suffix), result
        assert meta[META_ERROR_CODE] == ErrorCode.INVALID_PARAMS.value, result
        return Rejection(code=ErrorCode.INVALID_PARAMS, message=block["text"][:-len(suffix)], event_id=event_id,
                         data=meta.get(META_ERROR_DATA))

    async def notify(self, method: str, params: Any = None) -> None:
        await self.session.handle_notification(method, params, trace_id="t-notification")

    async def initialize(self, version: str = versions.LATEST_HANDSHAKE_VERSION,
                         capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        result = await self.ok("initialize", initialize_params(version, capabilities))
        self.peer.version = result["protocolVersion"]
        await self.notify("notifications/initialized")
        return result

    def _version_of(self, params: Any) -> str:
        meta = params.get("_meta") if isinstance(params, dict) else None
        requested = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        if requested in versions.STATELESS_VERSIONS:
            return requested
        return self.session.version or versions.LATEST_HANDSHAKE_VERSION


def initialize_params(version: str, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": capabilities or {},
            "clientInfo": {"name": "hexmcp-tests", "version": "0"}}


def stateless_meta(version: str = versions.LATEST_VERSION, capabilities: dict[str, Any] | None = None,
                   **extra: Any) -> dict[str, Any]:
    """The `_meta` a 2026-07-28 request carries instead of a handshake."""
    return {META_PROTOCOL_VERSION: version, META_CLIENT_CAPABILITIES: capabilities or {}, **extra}
