"""The classification pack: `list_categories` and `classify_text` for LLM routers, from a sentence-embedding
model run offline. It offers the classifier to other packs (`Classifier`: the gateway routes by it)."""

from __future__ import annotations

import argparse
from typing import Any, Iterable, Mapping

from hexmcp.core.pack import MetricFamily, Pack, PackProblem, Sample, Setup
from hexmcp.tools.ports import Classifier


class ClassificationPack(Pack):
    name = "classification"
    offers = (Classifier,)
    order = 10
    health_top_level = True

    def __init__(self) -> None:
        self.service: Any = None

    def add_flags(self, flags: argparse._ArgumentGroup) -> None:
        from .flags import add_classification_flags

        add_classification_flags(flags)

    def enabled(self, settings: argparse.Namespace) -> bool:
        return not getattr(settings, "no_classifier", False)

    def register(self, setup: Setup) -> None:
        """Reads a --taxonomy file now (a bad one stops start-up with its file, line and reason), checks the
        model package and the cache directory, and converts the model if not cached yet."""
        from .flags import classification_config
        from .mcp_tools import register_classification_tools

        self.service = register_classification_tools(setup.server, classification_config(setup.settings))
        if setup.settings.taxonomy:
            self.service.load_taxonomy_now()
        self.service.prepare_model()

    def ports(self) -> Mapping[type, Any]:
        return {Classifier: self.service}

    async def start(self) -> None:
        await self.service.start()

    def ready(self) -> bool:
        return bool(self.service.ready)

    def warm(self) -> bool:
        return bool(self.service.ready)

    def health(self) -> Mapping[str, Any]:
        return self.service.describe()

    def metrics(self) -> Iterable[MetricFamily]:
        counters = self.service.counters()
        yield MetricFamily(name="hexmcp_classifications", help="Classifications answered, by the category chosen",
                           kind="counter", label_names=("category",),
                           samples=tuple(Sample(labels=(category,), value=count)
                                         for category, count in sorted(counters.by_category.items())))
        yield _one("hexmcp_inference_queue_depth", "Classifications submitted and not yet answered (queued or running)",
                   "gauge", counters.queue_depth)
        yield _one("hexmcp_inference_workers", "Inference worker threads", "gauge", counters.workers)
        yield _one("hexmcp_inference_passes", "Model passes the inference workers finished", "counter",
                   counters.completed)
        yield _one("hexmcp_inference_dropped", "Queued classifications dropped because nobody waited for them any "
                   "more", "counter", counters.dropped)
        yield _one("hexmcp_inference_model_seconds", "Time the inference workers spent in the model and the "
                   "classifier head, summed over workers", "counter", counters.model_seconds, unit="seconds")

    def versions(self) -> Mapping[str, Any]:
        return {"model": self.service.model_version()}

    def explain(self, error: Exception) -> PackProblem | None:
        from .flags import explain

        return explain(error)

    def close(self) -> None:
        if self.service is not None:
            self.service.shutdown()


def _one(name: str, help: str, kind: str, value: float, unit: str = "") -> MetricFamily:
    return MetricFamily(name=name, help=help, kind=kind, samples=(Sample(value=value),), unit=unit)

