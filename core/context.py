"""What a tool (or prompt, or resource reader) can do while it runs: the `ToolContext` port.

One code path for every protocol version. A tool awaits `ctx.elicit(...)`; on handshake versions
that is a live server-to-client request through the session's `Peer`; on 2026-07-28 the core ends the
round with an `InputRequiredResult` and, when the client retries with the answers, runs the tool again
from the start, this time handing it the answer. Tools must therefore ask their questions in a
deterministic order and do their side effects after the last question.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

from . import versions
from .errors import ErrorCode, ProtocolError, ToolError
from .params import LOG_LEVELS
from .ports import Peer, PeerRequestFailed, RequestKey

log = structlog.get_logger("hexmcp.core")

# The client capability each kind of question needs, and the method that carries it.
_QUESTION_KINDS = {
    "sampling": ("sampling/createMessage", "sampling"),
    "elicitation": ("elicitation/create", "elicitation"),
    "roots": ("roots/list", "roots"),
}


class InputNeeded(Exception):
    """Raised inside a replayed call on 2026-07-28 to end this round with an InputRequiredResult."""

    def __init__(self, key: str, request: dict[str, Any], answers: dict[str, Any]) -> None:
        super().__init__(key)
        self.key = key
        self.request = request
        self.answers = answers


class ToolContext:
    def __init__(
        self,
        *,
        peer: Peer,
        version: str,
        request_key: RequestKey | None,
        client_capabilities: dict[str, Any],
        progress_token: str | int | None,
        log_level: str | None,
        answers: dict[str, Any] | None,
        session_id: str,
        trace_id: str,
    ) -> None:
        self._peer = peer
        self.version = version
        self.request_key = request_key
        self._capabilities = client_capabilities
        self._progress_token = progress_token
        self._log_level = log_level
        self._answers = dict(answers or {})
        self._questions_asked = 0
        self.session_id = session_id
        self.trace_id = trace_id

    @property
    def stateless(self) -> bool:
        return not versions.features(self.version).handshake

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the client how far along we are; a no-op unless the request asked for progress."""
        if self._progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self._progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.version >= versions.V2025_03_26:
            params["message"] = message
        await self._peer.notify("notifications/progress", params, related=self.request_key)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a log message to the client, if its chosen level lets this one through."""
        if self._log_level is None or LOG_LEVELS.index(level) < LOG_LEVELS.index(self._log_level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._peer.notify("notifications/message", params, related=self.request_key)

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        """Ask the client's LLM for a completion (`sampling/createMessage` params in, result out)."""
        return await self._ask("sampling", params)

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        """Ask the user for input (`elicitation/create` params in, `ElicitResult` out)."""
        if not versions.features(self.version).elicitation:
            raise ToolError(f"elicitation is not available in protocol version {self.version}")
        return await self._ask("elicitation", params)

    async def list_roots(self) -> dict[str, Any]:
        return await self._ask("roots", {})

    async def _ask(self, kind: str, params: dict[str, Any]) -> dict[str, Any]:
        method, capability = _QUESTION_KINDS[kind]
        if capability not in self._capabilities:
            if self.stateless:
                raise ProtocolError(ErrorCode.MISSING_CLIENT_CAPABILITY,
                                    f"this request needs the client capability '{capability}'",
                                    {"requiredCapabilities": {capability: {}}})
            raise ToolError(f"the client does not support {kind} (no '{capability}' capability declared)")
        self._questions_asked += 1
        if not self.stateless:
            try:
                return await self._peer.request(method, params, related=self.request_key)
            except PeerRequestFailed as exc:
                raise ToolError(f"the client could not answer the {kind} request: {exc}") from None
        key = f"{kind}-{self._questions_asked}"
        if key in self._answers:
            return self._answers[key]
        raise InputNeeded(key, {"method": method, "params": params}, self._answers)

    async def checkpoint(self) -> None:
        """Yield to the event loop so a cancellation can land in a long CPU-bound loop."""
        await asyncio.sleep(0)
