"""GatewayService: routed completions and the model catalogue, over the `ChatGateway` port.

routeCompletion = classify the prompt, inject the category's system prompt, pick model and reasoning
(the caller's model, else `providers.routing` for the category, else the routing policy's choice),
call the gateway and return the answer with the decision, the token usage and the latency. The
catalogue is the set of models the routing policy can choose, each marked with whether the gateway
says it serves it; `refresh()` re-reads the gateway's list and says whether anything changed.

The catalogue is served from the list last read while it is younger than `models_ttl_s`; an older one
is read again by one request shared by every caller waiting at that moment (single-flight), and a
failed read is remembered and answered for a backoff that doubles with each failure in a row (1 s up
to 30 s), so a burst of listModels against a failing gateway costs one read (its retries included),
not one per call.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Mapping

import attrs
import structlog

from .port import (ChatAnswer, ChatGateway, ChatMessage, ChatRequest, GatewayErrorKind, GatewayFailure, GatewayModel,
                   TextSink)
from .routing_source import CategoryRoute, RoutingSource

log = structlog.get_logger("hexmcp.gateway")


@attrs.frozen(kw_only=True)
class GatewaySettings:
    provider: str = "openai"
    default_model: str | None = None
    """DEFAULT_MODEL: replaces the routing policy's default model (categories that name none)."""
    routing: Mapping[str, str] = attrs.field(factory=dict)
    """`providers.routing`: category -> model, ahead of the taxonomy's recommendation."""
    max_tokens: int | None = None
    """`gateway.max_tokens`: the most a caller may ask for, and what is asked when it names none."""
    allowed_models: tuple[str, ...] = ()
    """`gateway.allowed_models`: models a caller may name beyond the routing's own; `*`: any."""


@attrs.frozen(kw_only=True)
class CatalogueEntry:
    id: str
    provider: str
    categories: tuple[str, ...]
    """Categories the routing sends here."""
    reasoning: bool
    """Some category routed here may turn reasoning on."""
    default: bool
    fallback: bool
    served: bool | None
    """The gateway lists it (None: its list is not known yet)."""

    def wire(self) -> dict[str, Any]:
        return {"id": self.id, "provider": self.provider,
                "capabilities": {"chat": True, "streaming": True, "reasoning": self.reasoning,
                                 "categories": list(self.categories), "default": self.default,
                                 "fallback": self.fallback, "served": self.served}}


@attrs.frozen(kw_only=True)
class RoutedCompletion:
    answer: ChatAnswer
    category: str | None
    confidence: float | None
    model: str
    model_source: str
    """caller, routing (providers.routing), policy (the taxonomy's routing) or default."""
    reasoning: bool
    reasoning_effort: str | None
    classification_ms: float
    gateway_ms: float

    def wire(self) -> dict[str, Any]:
        usage = self.answer.usage
        return {
            "completion": self.answer.text,
            "routing": {"category": self.category, "confidence": self.confidence, "model": self.model,
                        "modelSource": self.model_source, "reasoning": self.reasoning,
                        "reasoningEffort": self.reasoning_effort},
            "model": self.answer.model or self.model,
            "finishReason": self.answer.finish_reason,
            "usage": {"promptTokens": usage.prompt_tokens, "completionTokens": usage.completion_tokens,
                      "totalTokens": usage.total_tokens},
            "latencyMs": {"total": round(self.classification_ms + self.gateway_ms, 3),
                          "classification": round(self.classification_ms, 3), "gateway": round(self.gateway_ms, 3)},
            "attempts": self.answer.attempts,
        }


# A list read on demand is served this long: listModels stays near the gateway's truth (the background
# refresh runs only every models_refresh, 60 s), while a burst of callers costs one read per period.
MODELS_TTL_S = 2.0
FAILURE_BACKOFF_S = 1.0  # the first failed read is answered this long; each failure in a row doubles it
MAX_FAILURE_BACKOFF_S = 30.0


class GatewayService:
    def __init__(self, gateway: ChatGateway | None, routing: RoutingSource | None, settings: GatewaySettings, *,
                 models_ttl_s: float = MODELS_TTL_S, failure_backoff_s: float = FAILURE_BACKOFF_S,
                 clock: Any = time.monotonic) -> None:
        self.gateway = gateway
        self.routing = routing
        self.settings = settings
        self.models_ttl_s = models_ttl_s
        self.failure_backoff_s = failure_backoff_s
        self._clock = clock
        self.served: tuple[GatewayModel, ...] | None = None
        self.last_check: GatewayFailure | None = None
        self.last_check_ms: float | None = None
        self._checked_at: float | None = None  # when the last read (success or failure) ended
        self._failures_in_row = 0
        self._reading: asyncio.Future[GatewayFailure | None] | None = None
        self._routable: tuple[tuple[CategoryRoute, ...], tuple[str, ...]] | None = None

    # --- routeCompletion ---------------------------------------------------------------------------

    async def refusal(self, model: str | None, max_tokens: int | None) -> str | None:
        """Why a caller may not spend the operator's key this way, or None. A caller names only models the
        routing can choose or the operator allowed, and asks for at most `max_tokens`."""
        cap = self.settings.max_tokens
        if cap is not None and max_tokens is not None and max_tokens > cap:
            return f"maxTokens {max_tokens} is above this server's limit of {cap} (gateway.max_tokens)"
        if model is None or "*" in self.settings.allowed_models or model in self.settings.allowed_models:
            return None
        known = await self.routable_models()
        if model in known:
            return None
        offered = ", ".join([*known, *self.settings.allowed_models][:20]) or "none: omit `model`"
        return (f"model {model!r} is not one this server routes to; name one of: {offered} "
                "(the operator adds more with gateway.allowed_models)")

    async def route_completion(self, prompt: str, *, model: str | None = None, max_tokens: int | None = None,
                               system: str | None = None, on_text: TextSink | None = None,
                               client: str | None = None) -> RoutedCompletion | GatewayFailure:
        if self.gateway is None:
            return _not_configured()
        started = time.perf_counter()
        category: CategoryRoute | None = None
        confidence: float | None = None
        reasoning = False
        source = "caller"
        chosen = model
        if self.routing is not None:
            choice = await self.routing.route(prompt, client)
            category, confidence, reasoning = choice.category, choice.confidence, choice.use_reasoning
            if chosen is None:
                chosen, source = self._routed_model(category, choice.model)
        if chosen is None:
            chosen, source = self.settings.default_model, "default"
        if chosen is None:
            return GatewayFailure(kind=GatewayErrorKind.CONFIGURATION, attempts=0,
                                  message="no model to call: pass `model`, or set DEFAULT_MODEL (the classifier is off)")
        system_prompt = system if system is not None else (category.system_prompt if category else None)
        messages = ((ChatMessage(role="system", content=system_prompt),) if system_prompt else ()) + (
            ChatMessage(role="user", content=prompt),)
        effort = (category.reasoning_effort if category else "medium") if reasoning else None
        classified = time.perf_counter()
        if max_tokens is None:
            max_tokens = self.settings.max_tokens
        outcome = await self.gateway.complete(ChatRequest(model=chosen, messages=messages, max_tokens=max_tokens,
                                                          reasoning_effort=effort), on_text)
        if isinstance(outcome, GatewayFailure):
            return outcome
        return RoutedCompletion(answer=outcome, category=category.name if category else None, confidence=confidence,
                                model=chosen, model_source=source, reasoning=reasoning, reasoning_effort=effort,
                                classification_ms=(classified - started) * 1000,
                                gateway_ms=(time.perf_counter() - classified) * 1000)

    def _routed_model(self, category: CategoryRoute, policy_model: str) -> tuple[str, str]:
        if category.name in self.settings.routing:
            return self.settings.routing[category.name], "routing"
        if category.model is None and self.settings.default_model is not None and policy_model == self.routing_default():
            return self.settings.default_model, "default"
        return policy_model, "policy"

    def routing_default(self) -> str | None:
        return self.routing.default_model if self.routing is not None else None

    # --- the catalogue -----------------------------------------------------------------------------

    async def catalogue(self) -> list[CatalogueEntry] | GatewayFailure:
        """The models the routing can choose (refreshing the gateway's list first)."""
        if self.gateway is None:
            return _not_configured()
        failure = await self.current()
        if failure is not None:  # not a stale list: the caller should learn the gateway is failing
            return failure
        return await self.entries()

    async def current(self) -> GatewayFailure | None:
        """The list as last read while it is fresh, the last failure during its backoff, else a new read."""
        if self._checked_at is not None:
            age = self._clock() - self._checked_at
            if self.last_check is None and self.served is not None and age < self.models_ttl_s:
                return None
            if self.last_check is not None and age < self._backoff_s():
                return self.last_check
        return await self.refresh()

    def _backoff_s(self) -> float:
        return min(self.failure_backoff_s * 2 ** min(max(self._failures_in_row - 1, 0), 16), MAX_FAILURE_BACKOFF_S)

    async def routable_models(self) -> tuple[str, ...]:
        """The ids the routing can choose, sorted: the catalogue's, without building it. Every
        routeCompletion that names a model asks, so the answer is kept while the categories are the same."""
        categories = await self.routing.categories() if self.routing is not None else ()
        if self._routable is None or self._routable[0] is not categories:
            self._routable = (categories, tuple(sorted(self._routed(categories))))
        return self._routable[1]

    def _routed(self, categories: tuple[CategoryRoute, ...]) -> dict[str, list[CategoryRoute]]:
        """Model id -> the categories routed to it (the default and fallback models with or without any)."""
        default = self.settings.default_model or self.routing_default()
        fallback = self.routing.fallback_model if self.routing is not None else None
        routed: dict[str, list[CategoryRoute]] = {}
        for category in categories:
            target = self.settings.routing.get(category.name) or category.model or default
            if target:
                routed.setdefault(target, []).append(category)
        for extra in (default, fallback):
            if extra:
                routed.setdefault(extra, [])
        return routed

    async def entries(self) -> list[CatalogueEntry]:
        """The catalogue from what is known now (no gateway call)."""
        categories = await self.routing.categories() if self.routing is not None else ()
        default = self.settings.default_model or self.routing_default()
        fallback = self.routing.fallback_model if self.routing is not None else None
        routed = self._routed(categories)
        served = None if self.served is None else {m.id for m in self.served}
        return [CatalogueEntry(id=model, provider=self.settings.provider, categories=tuple(c.name for c in routes),
                               reasoning=any(c.use_reasoning is not False for c in routes) or model == fallback,
                               default=model == default, fallback=model == fallback,
                               served=None if served is None else model in served)
                for model, routes in sorted(routed.items())]

    async def refresh(self) -> GatewayFailure | None:
        """Fetch the gateway's models list (the connectivity check); remember how it went. A read already
        under way is joined, not repeated; a caller cancelled while waiting leaves it to the others."""
        if self.gateway is None:
            return _not_configured()
        if self._reading is None or self._reading.done():
            self._reading = asyncio.ensure_future(self._read())
        return await asyncio.shield(self._reading)

    async def _read(self) -> GatewayFailure | None:
        assert self.gateway is not None
        started = time.perf_counter()
        outcome = await self.gateway.list_models()
        self.last_check_ms = round((time.perf_counter() - started) * 1000, 1)
        self._checked_at = self._clock()
        if isinstance(outcome, GatewayFailure):
            self.last_check = outcome
            self._failures_in_row += 1
            return outcome
        self.last_check = None
        self._failures_in_row = 0
        self.served = outcome
        return None

    def describe(self) -> dict[str, Any]:
        """For /health: whether a gateway is configured and how its last check went (never a credential)."""
        if self.gateway is None:
            return {"configured": False, "state": "unconfigured"}
        if self.last_check is not None:
            state = "unreachable"
        else:
            state = "ok" if self.served is not None else "unchecked"
        report: dict[str, Any] = {"configured": True, "state": state, "provider": self.settings.provider,
                                  "latency_ms": self.last_check_ms,
                                  "models": None if self.served is None else len(self.served)}
        if self.last_check is not None:
            report["error"] = {"code": self.last_check.code, "message": self.last_check.message}
        return report


def _not_configured() -> GatewayFailure:
    return GatewayFailure(kind=GatewayErrorKind.CONFIGURATION, attempts=0,
                          message="no gateway configured: start hexmcp with GATEWAY_URL (or --gateway-url, "
                                  "or gateway.url in a --gateway-config file)")
