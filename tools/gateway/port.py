"""The gateway pack's port to an LLM gateway: chat requests and answers as values, and the pack's error codes.

The outbound client (`outbound/`) speaks some provider's HTTP API behind `ChatGateway`; the tools of the
pack see only this module. Failures are values too: every call returns its answer or a `GatewayFailure`
whose `kind` is one of the design's fixed codes (-32001..-32007), with the upstream status and the number
of attempts made, so a tool can report them without knowing HTTP.
"""

from __future__ import annotations

import enum
from typing import Any, Awaitable, Callable, Protocol

import attrs

from hexmcp.core import PackErrorCode, new_event_id


class GatewayErrorKind(enum.Enum):
    """Why a gateway call failed; the value is the design's error code, carried in a tool error's data."""

    AUTHENTICATION = -32001
    """The gateway refused our credentials (HTTP 401/403); retrying cannot help."""
    RATE_LIMITED = -32002
    """HTTP 429 on every attempt: the provider's rate limit (or quota) held."""
    MODEL_NOT_FOUND = -32003
    """The gateway does not serve the model asked for (HTTP 404, or a 400 naming the model)."""
    PROVIDER_UNAVAILABLE = -32004
    """HTTP 5xx on every attempt, another refusal, or an answer we cannot use (too large, not JSON)."""
    CONFIGURATION = -32005
    """No gateway is configured (or its configuration cannot work); set GATEWAY_URL."""
    NETWORK = -32006
    """The connection could not be made or broke (refused, reset, closed mid-answer)."""
    TIMEOUT = -32007
    """The gateway did not answer within the configured timeout (or answered HTTP 408)."""

    @property
    def error_code(self) -> PackErrorCode:
        """The pack's error code for the same failure (a `models/list` rejection carries it)."""
        return ERROR_CODES[self]


# The pack's error codes. On JSON-RPC each is its kind's code: the design fixes them, and two equal codes
# the protocol uses for something else (-32001 a timeout, -32005 a busy server), which is why only the
# gateway's own methods (models/list) ever answer them. For REST, a gateway's statuses: the fault is upstream.
ERROR_CODES: dict[GatewayErrorKind, PackErrorCode] = {
    kind: PackErrorCode(value=name, jsonrpc_code=kind.value, http_status=http_status) for kind, name, http_status in (
        (GatewayErrorKind.AUTHENTICATION, "gateway_authentication", 502),
        (GatewayErrorKind.RATE_LIMITED, "gateway_rate_limited", 429),
        (GatewayErrorKind.MODEL_NOT_FOUND, "gateway_model_not_found", 404),
        (GatewayErrorKind.PROVIDER_UNAVAILABLE, "gateway_unavailable", 502),
        (GatewayErrorKind.CONFIGURATION, "gateway_not_configured", 503),
        (GatewayErrorKind.NETWORK, "gateway_network", 502),
        (GatewayErrorKind.TIMEOUT, "gateway_timeout", 504),
    )
}


@attrs.frozen(kw_only=True)
class GatewayFailure:
    """A gateway call that did not produce an answer, as a value."""

    kind: GatewayErrorKind
    message: str
    """One line fit for a model and an operator; never holds a credential."""
    status: int | None = None
    """The last upstream HTTP status, if an answer came at all."""
    attempts: int = 1
    event_id: str = attrs.field(factory=new_event_id, eq=False)
    """What the client's answer and the log line about this failure both name (not compared: two failures
    alike are equal whatever their ids)."""

    @property
    def code(self) -> int:
        return self.kind.value

    def data(self) -> dict[str, Any]:
        """The error's `data`: its kind by name, the upstream status and the attempts made."""
        return {"code": self.code, "kind": self.kind.name.lower(), "status": self.status, "attempts": self.attempts}


@attrs.frozen(kw_only=True)
class ChatMessage:
    role: str
    content: str


@attrs.frozen(kw_only=True)
class ChatRequest:
    model: str
    messages: tuple[ChatMessage, ...]
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    """None: reasoning off (nothing sent); else low, medium or high."""


@attrs.frozen(kw_only=True)
class TokenUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


@attrs.frozen(kw_only=True)
class ChatAnswer:
    text: str
    model: str
    """The model the gateway says answered (it may resolve an alias)."""
    usage: TokenUsage
    finish_reason: str | None
    attempts: int = 1


@attrs.frozen(kw_only=True)
class GatewayModel:
    """A model the gateway says it serves."""

    id: str
    owned_by: str | None = None


TextSink = Callable[[str], Awaitable[None]]
"""Receives the answer's text piece by piece as it streams in."""


class ChatGateway(Protocol):
    provider: str
    """The provider kind (openai, anthropic, local), for listings."""

    async def complete(self, request: ChatRequest, on_text: TextSink | None = None) -> ChatAnswer | GatewayFailure:
        """One chat completion; with `on_text`, streamed, each piece handed over as it arrives."""

    async def list_models(self) -> tuple[GatewayModel, ...] | GatewayFailure:
        """The models the gateway serves (a cheap request, also the start-up connectivity check)."""
