"""The concept tools registered with their handlers made on first use: what `hexmcp stdio` does before
its `initialize` answer.

The definitions (definitions.py) are registered at once; the handlers (mcp_tools.py, with the item
builders and the concept layer's value classes under them) are imported and made by the first call,
read or render, or by the service's start-up hook once the answer is out, so the handshake does not pay
for modules a session may never use. A call that comes first makes them itself: it waits, never errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hexmcp.core import McpServer
from hexmcp.core.registrar import Registrar

from .definitions import Handlers, Implementation, register_definitions
from .service import ConceptService

if TYPE_CHECKING:
    from hexmcp.tools.ports import KnowledgeBase


def loaded_on_first_use(service: ConceptService) -> Implementation:
    """The handlers over `service`, imported and made by the first caller and kept (the import is
    synchronous, so two first calls cannot both make them)."""
    made: list[Handlers] = []

    def implementation() -> Handlers:
        if not made:
            from .mcp_tools import ConceptHandlers

            made.append(ConceptHandlers(service))
        return made[0]
    return implementation


def register_concept_tools_on_first_use(server: McpServer, knowledge: KnowledgeBase,
                                        glossary_path: str | None = None) -> ConceptService:
    """The concept tools on `server` with their handlers loaded on first use; the service (made now: a bad
    glossary stops start-up, GlossaryError), whose start-up hook loads them once the server is answering."""
    service = ConceptService(knowledge, glossary_path)
    service.load_handlers = implementation = loaded_on_first_use(service)
    register_definitions(Registrar(server), service, implementation)
    return service
