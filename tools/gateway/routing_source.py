"""Where routeCompletion's routing decision comes from: a `RoutingSource`.

The gateway tools need a category, its system prompt and the routing policy's model and reasoning for
a prompt. `ClassifierRouting` reads them from the classification service, seen as a
`hexmcp.tools.ports.Classifier` (its two saturation errors are the shared inference pool's, imported
where they are caught), so the rest of this package depends on the gateway port alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import attrs

from hexmcp.core import ErrorCode, ProtocolError

if TYPE_CHECKING:
    from hexmcp.tools.ports import Classifier


@attrs.frozen(kw_only=True)
class CategoryRoute:
    """A category and what the routing policy says for it."""

    name: str
    description: str
    system_prompt: str
    model: str | None
    """The category's recommended model; None: the default model."""
    use_reasoning: bool | str
    """True, False, or "auto" (decided per prompt)."""
    reasoning_effort: str


@attrs.frozen(kw_only=True)
class RouteChoice:
    category: CategoryRoute
    confidence: float
    model: str
    use_reasoning: bool


class RoutingSource(Protocol):
    default_model: str
    fallback_model: str | None

    async def categories(self) -> tuple[CategoryRoute, ...]:
        """Every category, in class-index order (needs only the taxonomy, not the model)."""

    async def route(self, prompt: str, client: str | None) -> RouteChoice:
        """Classify `prompt` and apply the routing policy (waits for the model if it is still loading)."""


class ClassifierRouting:
    """A `RoutingSource` over the classification service."""

    def __init__(self, service: Classifier) -> None:
        self._service = service
        self.default_model: str = service.config.default_model
        self.fallback_model: str | None = service.config.fallback_model
        self._routes: tuple[object, tuple[CategoryRoute, ...]] | None = None
        """The taxonomy the routes were built from, and them: every routed call reads them, and a frozen
        taxonomy gives the same routes until another one is loaded."""

    async def categories(self) -> tuple[CategoryRoute, ...]:
        taxonomy = await self._service.ensure_taxonomy()
        if self._routes is None or self._routes[0] is not taxonomy:
            self._routes = (taxonomy, tuple(
                CategoryRoute(name=c.name, description=c.description, system_prompt=c.system_prompt,
                              model=c.routing.model, use_reasoning=c.routing.use_reasoning,
                              reasoning_effort=c.routing.reasoning_effort) for c in taxonomy.categories))
        return self._routes[1]

    async def route(self, prompt: str, client: str | None) -> RouteChoice:
        """Raises ProtocolError SERVER_BUSY or REQUEST_TIMEOUT when the classifier is saturated, as
        classify_text answers them."""
        from hexmcp.tools.embedding.inference_pool import RequestTimeoutError, ServiceOverloadedError

        try:
            decision = await self._service.classify(prompt, client=client)
        except ServiceOverloadedError as error:
            raise ProtocolError(ErrorCode.SERVER_BUSY, str(error)) from None
        except RequestTimeoutError as error:
            raise ProtocolError(ErrorCode.REQUEST_TIMEOUT, str(error)) from None
        category = (await self.categories())[decision["class"]]
        return RouteChoice(category=category, confidence=float(decision["confidence"]), model=decision["model"],
                           use_reasoning=bool(decision["use_reasoning"]))
