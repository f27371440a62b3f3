"""Prometheus collectors over the tool packs' own metrics, read when scraped (no cost per call).

Packs never import adapters or prometheus-client: each reports `MetricFamily` values (core/pack.py) from
plain counters it keeps, and this collector turns them into Prometheus families. With `hexmcp stdio
--metrics-port` a scrape runs on the metrics server's thread while the event loop updates those counters;
packs copy each counter with `dict()` (one C call under the GIL) before reading it.
"""

from __future__ import annotations

from typing import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, SummaryMetricFamily
from prometheus_client.registry import Collector

from hexmcp.core.pack import MetricFamily, Pack

_FAMILIES = {"counter": CounterMetricFamily, "gauge": GaugeMetricFamily}


class PackMetrics(Collector):
    def __init__(self, pack: Pack) -> None:
        self._pack = pack

    def collect(self) -> Iterator[Metric]:
        for family in self._pack.metrics():
            yield prometheus_family(family)


def prometheus_family(family: MetricFamily) -> Metric:
    if family.kind == "summary":
        summary = SummaryMetricFamily(family.name, family.help, labels=list(family.label_names), unit=family.unit)
        for sample in family.samples:
            summary.add_metric(list(sample.labels), count_value=sample.count or 0, sum_value=sample.value)
        return summary
    make = _FAMILIES[family.kind]
    if not family.label_names:
        value = family.samples[0].value if family.samples else 0
        return make(family.name, family.help, value=value, unit=family.unit)
    metric = make(family.name, family.help, labels=list(family.label_names), unit=family.unit)
    for sample in family.samples:
        metric.add_metric(list(sample.labels), sample.value)
    return metric
