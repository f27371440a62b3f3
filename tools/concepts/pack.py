"""The concepts pack: the concept graph built over the knowledge base (resolveConcept, explainConcept,
queryGraph, analyzeGraph, linkEntities, the concept:// resources and the explain-concept prompt), with an
optional YAML glossary merged over it. It needs the knowledge base (`KnowledgeBase`); without the
knowledge pack it is not composed."""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from hexmcp.core.pack import Pack, PackProblem, Setup
from hexmcp.tools.ports import KnowledgeBase


class ConceptsPack(Pack):
    name = "concepts"
    extra = "concepts"
    extra_modules = ("networkx", "scipy", "rapidfuzz", "yake")
    needs = (KnowledgeBase,)
    order = 40

    def __init__(self) -> None:
        self.service: Any = None

    def add_flags(self, flags: argparse._ArgumentGroup) -> None:
        flags.add_argument("--glossary", metavar="FILE", help="YAML glossary of concepts merged over those derived "
                                                               "from the documents (a bad file stops start-up, exit 2)")

    def requested(self, settings: argparse.Namespace) -> bool:
        return bool(settings.glossary)

    def register(self, setup: Setup) -> None:
        """A bad --glossary stops start-up here with its file, line and reason."""
        from .first_use import register_concept_tools_on_first_use

        # The handlers load on first use or once the server answers, off the handshake's path.
        self.service = register_concept_tools_on_first_use(setup.server, setup.ports[KnowledgeBase],
                                                           setup.settings.glossary)

    def explain(self, error: Exception) -> PackProblem | None:
        from .errors import GlossaryError

        return PackProblem(str(error)) if isinstance(error, GlossaryError) else None

    async def start(self) -> None:
        await self.service.start()

    def warm(self) -> bool:
        return bool(self.service.ready)

    def health(self) -> Mapping[str, Any]:
        return self.service.describe()
