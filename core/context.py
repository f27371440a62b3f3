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

from . import versions
from .answers import answer_problem
from .errors import ErrorCode, ProtocolError, ToolError
from .params import LOG_LEVELS
from .ports import Peer, PeerRequestFailed, RequestKey

# The client capability each kind of question needs, and the method that carries it.
_QUESTION_KINDS = {
    "sampling": ("sampling/createMessage", "sampling"),
    "elicitation": ("elicitation/create", "elicitation"),
    "roots": ("roots/list", "roots"),
}


class InputNeeded(Exception):
    """Raised inside a replayed call on 2026-07-28 to end this round with an InputRequiredResult."""

    def __init__(self, requests: dict[str, dict[str, Any]], answers: dict[str, Any]) -> None:
        super().__init__(", ".join(requests))
        self.requests = requests
        self.answers = answers


class ToolContext:
    # One is built for every tools/call: slots make that and every attribute read cheaper.
    __slots__ = ("_peer", "version", "request_key", "_capabilities", "_progress_token", "_log_level", "_answers",
                 "_questions_asked", "session_id", "trace_id", "client_id", "task", "task_gate")

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
        client_id: str | None = None,
    ) -> None:
        self._peer = peer
        self.version = version
        self.request_key = request_key
        self._capabilities = client_capabilities
        self._progress_token = progress_token
        self._log_level = log_level
        self._answers = dict(answers) if answers else {}
        self._questions_asked = 0
        self.session_id = session_id
        self.trace_id = trace_id
        # Who is asking, across sessions (a bearer token's digest, else an address): key per-client limits on it.
        self.client_id = client_id or session_id
        # The `TaskChannel` when this call runs as a task (tasks/calls.py): questions and progress go to it.
        self.task: Any = None
        # For an inputs-first long-running tool, until it begins its task: the future `begin_task` resolves.
        self.task_gate: Any = None

    async def begin_task(self) -> None:
        """Begin the task now (a tool registered `LongRunning(inputs_first=True)`): the `tools/call` is answered
        with the task and the rest of the tool runs as its work. A no-op outside such a call."""
        gate, self.task_gate = self.task_gate, None
        if gate is None or gate.done():
            return
        channel = asyncio.get_running_loop().create_future()
        gate.set_result(channel)
        self.task = await channel

    @property
    def wants_progress(self) -> bool:
        """The client sent a progress token: worth producing progress (streamed text, say) for."""
        return self._progress_token is not None

    @property
    def stateless(self) -> bool:
        return not versions.features(self.version).handshake

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the client how far along we are; a no-op unless the request asked for progress. In a task,
        progress is the task's `statusMessage` (the extension carries no progress notifications)."""
        if self.task is not None:
            done = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
            await self.task.progress(f"{message} ({done})" if message else done)
            return
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

    def supports(self, capability: str) -> bool:
        """Whether the client declared `capability` (sampling, elicitation, roots, ...) for this request."""
        return capability in self._capabilities

    async def sample(self, params: dict[str, Any], *, key: str | None = None) -> dict[str, Any]:
        """Ask the client's LLM for a completion (`sampling/createMessage` params in, result out)."""
        return (await self.ask({key or self._next_key("sampling"): ("sampling", params)})).popitem()[1]

    async def elicit(self, params: dict[str, Any], *, key: str | None = None) -> dict[str, Any]:
        """Ask the user for input (`elicitation/create` params in, `ElicitResult` out)."""
        return (await self.ask({key or self._next_key("elicitation"): ("elicitation", params)})).popitem()[1]

    async def list_roots(self, *, key: str | None = None) -> dict[str, Any]:
        return (await self.ask({key or self._next_key("roots"): ("roots", {})})).popitem()[1]

    async def ask(self, questions: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
        """Ask several questions at once: `{key: (kind, params)}` with kind sampling/elicitation/roots.

        Keys name the questions on the wire (2026-07-28 `inputRequests`) and must be stable across
        replays of the same call. On handshake versions the questions are live requests, asked in order.
        """
        for kind, _params in questions.values():
            self._require(kind)
        if self.task is not None:
            wire = {key: {"method": _QUESTION_KINDS[kind][0], "params": params} for key, (kind, params) in questions.items()}
            return await self.task.ask(wire, lambda key, answer: answer_problem(*questions[key], answer) is None)
        if not self.stateless:
            return {key: await self._ask_live(kind, params) for key, (kind, params) in questions.items()}
        missing: dict[str, dict[str, Any]] = {}
        answers: dict[str, dict[str, Any]] = {}
        for key, (kind, params) in questions.items():
            answer = self._answers.get(key)
            if answer is None:
                missing[key] = {"method": _QUESTION_KINDS[kind][0], "params": params}
            elif (problem := answer_problem(kind, params, answer)) is not None:
                raise ProtocolError(ErrorCode.INVALID_PARAMS, f"inputResponses.{key} is not a valid {kind} result: {problem}",
                                    {"path": f"$.inputResponses.{key}"})
            else:
                answers[key] = answer
        if missing:
            raise InputNeeded(missing, {k: v for k, v in self._answers.items() if k not in missing})
        return answers

    def _next_key(self, kind: str) -> str:
        self._questions_asked += 1
        return f"{kind}-{self._questions_asked}"

    def _require(self, kind: str) -> None:
        method, capability = _QUESTION_KINDS[kind]
        if kind == "elicitation" and not versions.features(self.version).elicitation:
            raise ToolError(f"elicitation is not available in protocol version {self.version}")
        if capability in self._capabilities:
            return
        if self.stateless:
            raise ProtocolError(ErrorCode.MISSING_CLIENT_CAPABILITY,
                                f"this request needs the client capability '{capability}'",
                                {"requiredCapabilities": {capability: {}}})
        raise ToolError(f"the client does not support {kind} (no '{capability}' capability declared)")

    async def _ask_live(self, kind: str, params: dict[str, Any]) -> dict[str, Any]:
        method, _capability = _QUESTION_KINDS[kind]
        try:
            answer = await self._peer.request(method, params, related=self.request_key)
        except PeerRequestFailed as exc:
            raise ToolError(f"the client could not answer the {kind} request: {exc}") from None
        problem = answer_problem(kind, params, answer)
        if problem is not None:  # a tool must never act on (or crash on) an answer of the wrong shape
            raise ToolError(f"the client's answer to {method} is not valid: {problem}")
        return answer
