"""The caller's model checked against the routing catalogue on every routeCompletion, kept cheap (issue 31):
the routes and the routable ids are built once per taxonomy, and still follow a taxonomy that changes."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from hexmcp.tools.classification.taxonomy import Category, RoutingPolicy
from hexmcp.tools.gateway.routing_source import ClassifierRouting
from hexmcp.tools.gateway.service import GatewayService, GatewaySettings


def _category(name: str, model: str | None) -> Category:
    return Category(name=name, description=f"{name} questions", system_prompt=f"You answer {name}.",
                    routing=RoutingPolicy(model=model), examples=())


class FakeClassifier:
    """Enough of the classification service for ClassifierRouting.categories(): a taxonomy to swap."""

    def __init__(self, categories: list[Category]) -> None:
        self.config = SimpleNamespace(default_model="small-model", fallback_model="fallback-model")
        self.taxonomy = SimpleNamespace(categories=tuple(categories))
        self.loads = 0

    async def ensure_taxonomy(self):
        self.loads += 1
        return self.taxonomy


def _service(classifier: FakeClassifier, **settings) -> GatewayService:
    return GatewayService(object(), ClassifierRouting(classifier), GatewaySettings(**settings))  # type: ignore[arg-type]


def test_the_routes_are_built_once_per_taxonomy_and_follow_a_new_one():
    classifier = FakeClassifier([_category("math", "large-model"), _category("law", None)])
    routing = ClassifierRouting(classifier)

    async def run():
        first, again = await routing.categories(), await routing.categories()
        classifier.taxonomy = SimpleNamespace(categories=(_category("math", "huge-model"),))
        return first, again, await routing.categories()

    first, again, swapped = asyncio.run(run())
    assert again is first and classifier.loads == 3  # the taxonomy is asked each time, the routes reused
    assert [(c.name, c.model) for c in first] == [("math", "large-model"), ("law", None)]
    assert [(c.name, c.model) for c in swapped] == [("math", "huge-model")]


def test_a_named_model_is_checked_against_the_routes_without_building_the_catalogue(monkeypatch):
    classifier = FakeClassifier([_category("math", "large-model"), _category("law", None)])
    service = _service(classifier, max_tokens=512, allowed_models=("operator-extra",))
    built = []
    monkeypatch.setattr(GatewayService, "entries", lambda self: built.append(1))  # refusal must not need it

    async def run():
        answers = [await service.refusal(model, None) for model in
                   ("large-model", "small-model", "fallback-model", "operator-extra", None, "large-model")]
        return answers, await service.refusal("gpt-most-expensive", None), await service.refusal(None, 513)

    answers, unknown, too_many = asyncio.run(run())
    assert answers == [None] * 6 and built == []
    assert unknown is not None and "'gpt-most-expensive' is not one this server routes to" in unknown
    assert "fallback-model, large-model, small-model, operator-extra" in unknown  # nothing offered is lost
    assert too_many is not None and "maxTokens 513 is above this server's limit of 512" in too_many


def test_the_routable_models_follow_a_taxonomy_that_changes():
    classifier = FakeClassifier([_category("math", "large-model")])
    service = _service(classifier)

    async def run():
        before = await service.refusal("huge-model", None), await service.refusal("large-model", None)
        classifier.taxonomy = SimpleNamespace(categories=(_category("math", "huge-model"),))
        after = await service.refusal("huge-model", None), await service.refusal("large-model", None)
        return before, after

    (huge_before, large_before), (huge_after, large_after) = asyncio.run(run())
    assert huge_before is not None and large_before is None
    assert huge_after is None and large_after is not None


def test_the_catalogue_lists_what_the_check_accepts():
    classifier = FakeClassifier([_category("math", "large-model"), _category("law", None)])
    service = _service(classifier, routing={"law": "legal-model"})

    async def run():
        return [entry.id for entry in await service.entries()], await service.routable_models()

    listed, routable = asyncio.run(run())
    assert listed == list(routable) == ["fallback-model", "large-model", "legal-model", "small-model"]
