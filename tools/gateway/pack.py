"""The gateway pack: routeCompletion, listModels and models/list over an OpenAI-compatible LLM gateway,
routed by the classifier when the classification pack offers `Classifier`, with prompts completing the
knowledge base's document ids when the knowledge pack offers `KnowledgeBase`. Registered without a
configured gateway too: its tools then answer -32005."""

from __future__ import annotations

import argparse
from typing import Any, Iterable, Mapping

from hexmcp.core.pack import BackgroundTask, MetricFamily, Pack, PackProblem, Sample, Setup
from hexmcp.tools.environment import CLIENT_MODULES
from hexmcp.tools.ports import Classifier, KnowledgeBase


class GatewayPack(Pack):
    name = "gateway"
    extra = "gateway"
    extra_modules = CLIENT_MODULES
    uses = (Classifier, KnowledgeBase)
    order = 30

    def __init__(self) -> None:
        self.tools: Any = None
        self.config: Any = None

    def add_flags(self, flags: argparse._ArgumentGroup) -> None:
        from .settings import add_gateway_flags

        add_gateway_flags(flags)

    def requested(self, settings: argparse.Namespace) -> bool:
        import os

        return bool(settings.gateway_url or settings.gateway_config or os.environ.get("GATEWAY_URL")
                    or os.environ.get("GATEWAY_CONFIG") or getattr(settings, "gateway_table", None))

    def register(self, setup: Setup) -> None:
        """A bad gateway setting (flag, variable or file) stops start-up here (exit 2)."""
        from .mcp_tools import register_gateway_tools
        from .routing_source import ClassifierRouting
        from .service import GatewaySettings
        from .settings import apply_gateway_log_level, build_gateway, gateway_config

        self.config = config = apply_gateway_log_level(gateway_config(setup.settings), setup.settings.log_level)
        knowledge = setup.ports.get(KnowledgeBase)
        classifier = setup.ports.get(Classifier)
        settings = GatewaySettings(provider=config.provider_type, default_model=config.default_model,
                                   routing=config.routing, max_tokens=config.max_tokens,
                                   allowed_models=config.allowed_models)
        self.tools = register_gateway_tools(
            setup.server, build_gateway(config), ClassifierRouting(classifier) if classifier is not None else None,
            settings, refresh_s=config.models_refresh_s,
            documents=(lambda: knowledge.documents) if knowledge is not None else None,
            document_uri=knowledge.resource_uri if knowledge is not None else None)

    async def start(self) -> None:
        await self.tools.start()

    def background(self) -> list[BackgroundTask]:
        return [self.tools.watch]

    def health(self) -> Mapping[str, Any]:
        report = dict(self.tools.describe())
        if self.config.configured:
            report["url"] = self.config.public_url()  # where the gateway is, never its key
        return report

    def metrics(self) -> Iterable[MetricFamily]:
        gateway = self.tools.service.gateway
        if getattr(gateway, "calls", None) is None:
            return
        yield MetricFamily(
            name="hexmcp_gateway_calls", kind="counter", label_names=("operation", "outcome"),
            help="Calls to the LLM gateway, by operation and outcome (ok, or the failure kind after the retries)",
            samples=tuple(Sample(labels=key, value=count) for key, count in sorted(dict(gateway.calls).items())))
        yield MetricFamily(name="hexmcp_gateway_retries", kind="counter",
                           help="Gateway attempts beyond each call's first (attempts = calls + retries)",
                           samples=(Sample(value=gateway.retries),))

    def explain(self, error: Exception) -> PackProblem | None:
        from .outbound import GatewayConfigError

        return PackProblem(str(error)) if isinstance(error, GatewayConfigError) else None
