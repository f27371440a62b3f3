"""Ports between packs: what one pack offers and another uses, as Protocols, so packs never import each
other. A pack offers an implementation from `Pack.ports()`; a pack that uses one names it in `needs` or
`uses` and finds it in `Setup.ports`."""

from __future__ import annotations

from typing import Any, Mapping, Protocol


class Routing(Protocol):
    """A routing decision for a prompt: the classifier offers it, the gateway's routeCompletion uses it."""

    default_model: str
    fallback_model: str | None

    async def categories(self) -> tuple[Any, ...]:
        """Every category with its routing policy, in class-index order."""

    async def route(self, prompt: str, client: str | None) -> Any:
        """Classify `prompt` and apply the routing policy."""


class KnowledgeBase(Protocol):
    """The knowledge base's documents and passage index: concepts are built over it, the gateway's
    prompts complete its document ids."""

    documents: Mapping[str, Any]

    def resource_uri(self, document_id: str) -> str:
        """The MCP resource URI of a document."""

    async def ensure_documents(self) -> None:
        """Read the corpus if not read yet."""

    async def start(self) -> None:
        """Build the index (idempotent)."""

    async def index(self) -> Any:
        """The newest complete index (waits for the first build)."""
