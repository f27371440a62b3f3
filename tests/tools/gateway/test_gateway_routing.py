"""ClassifierRouting over the real classification service: the decision routeCompletion uses, and a
saturated classifier answered as classify_text answers it."""

from __future__ import annotations

import asyncio
import time

import pytest

from hexmcp.core import ErrorCode, ProtocolError
from hexmcp.tools.classification import ClassificationConfig, ClassificationService
from hexmcp.tools.gateway.routing_source import ClassifierRouting

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def _route(config: ClassificationConfig, prompt: str):
    async def run():
        service = ClassificationService.from_config(config)
        try:
            await service.start()
            routing = ClassifierRouting(service)
            return await routing.route(prompt, None), await routing.categories()
        finally:
            await service.close()
    return asyncio.run(run())


def test_the_decision_carries_the_category_and_its_policy():
    choice, categories = _route(ClassificationConfig(), "Prove that there are infinitely many primes.")
    assert choice.category.name == "math" and choice.category in categories
    assert choice.model == (choice.category.model or ClassificationConfig().default_model)
    assert 0 < choice.confidence <= 1 and choice.use_reasoning is True


def test_a_classifier_timeout_is_request_timeout(monkeypatch):
    # The forward pass is held back in its worker thread: on a loaded machine the worker's answer and
    # the expired timer could otherwise reach the event loop in the same pass, the answer first.
    from hexmcp.tools.classification.engine import ClassifierEngine
    classify = ClassifierEngine.classify

    def slow_classify(self, *args, **kwargs):
        time.sleep(0.5)
        return classify(self, *args, **kwargs)

    monkeypatch.setattr(ClassifierEngine, "classify", slow_classify)
    with pytest.raises(ProtocolError) as caught:
        _route(ClassificationConfig(request_timeout_s=1e-9), "What is 5 + 3?")
    assert caught.value.code is ErrorCode.REQUEST_TIMEOUT
