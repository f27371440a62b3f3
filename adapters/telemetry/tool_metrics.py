"""Prometheus collectors over the tools' own counters, read when scraped (no cost per call).

Tools never import adapters: each keeps plain counters of its own (the classifier's answers per category
and its inference pool's state, the knowledge base's search times, the gateway client's calls and
retries); the composition root hands those objects here. A collector yields nothing for a part that
is not configured. With `hexmcp stdio --metrics-port` a scrape runs on the metrics server's thread while
the event loop updates those counters: each is copied with `dict()` (one C call under the GIL) first.
"""

from __future__ import annotations

from typing import Any, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, SummaryMetricFamily
from prometheus_client.registry import Collector


class ClassifierMetrics(Collector):
    def __init__(self, service: Any) -> None:
        self._service = service  # tools.classification.ClassificationService

    def collect(self) -> Iterator[Metric]:
        counters = self._service.counters()
        answers = CounterMetricFamily("hexmcp_classifications", "Classifications answered, by the category chosen",
                                      labels=["category"])
        for category, count in sorted(counters.by_category.items()):
            answers.add_metric([category], count)
        yield answers
        yield GaugeMetricFamily("hexmcp_inference_queue_depth", "Classifications submitted and not yet answered "
                                "(queued or running)", value=counters.queue_depth)
        yield GaugeMetricFamily("hexmcp_inference_workers", "Inference worker threads", value=counters.workers)
        yield CounterMetricFamily("hexmcp_inference_passes", "Model passes the inference workers finished",
                                  value=counters.completed)
        yield CounterMetricFamily("hexmcp_inference_dropped", "Queued classifications dropped because nobody "
                                  "waited for them any more", value=counters.dropped)
        yield CounterMetricFamily("hexmcp_inference_model_seconds", "Time the inference workers spent in the model "
                                  "and the classifier head, summed over workers", value=counters.model_seconds,
                                  unit="seconds")


class KnowledgeMetrics(Collector):
    def __init__(self, service: Any) -> None:
        self._service = service  # tools.knowledge.service.KnowledgeService

    def collect(self) -> Iterator[Metric]:
        searches = SummaryMetricFamily("hexmcp_knowledge_search_seconds", "Time the knowledge index took to "
                                       "answer a search (the index's work alone), by tool", labels=["tool"])
        seconds = dict(self._service.search_seconds)
        for tool, count in sorted(dict(self._service.searches).items()):
            searches.add_metric([tool], count_value=count, sum_value=seconds.get(tool, 0.0))
        yield searches
        lookups = CounterMetricFamily("hexmcp_knowledge_vector_cache_lookups", "Documents looked up in the passage-"
                                      "vector cache by the index builds: hit (vectors reused) or miss (embedded)",
                                      labels=["result"])
        counts = dict(self._service.vector_cache_lookups)
        for result in ("hit", "miss"):
            lookups.add_metric([result], counts.get(result, 0))
        yield lookups


class GatewayMetrics(Collector):
    def __init__(self, gateway: Any) -> None:
        self._gateway = gateway  # tools.gateway.outbound.OpenAICompatibleGateway

    def collect(self) -> Iterator[Metric]:
        calls = CounterMetricFamily("hexmcp_gateway_calls", "Calls to the LLM gateway, by operation and outcome "
                                    "(ok, or the failure kind after the retries)", labels=["operation", "outcome"])
        for (operation, outcome), count in sorted(dict(self._gateway.calls).items()):
            calls.add_metric([operation, outcome], count)
        yield calls
        yield CounterMetricFamily("hexmcp_gateway_retries", "Gateway attempts beyond each call's first "
                                  "(attempts = calls + retries)", value=self._gateway.retries)
