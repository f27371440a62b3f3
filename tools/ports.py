"""What one tool pack uses of another, as protocols: no pack imports another (tests/test_architecture.py).

A pack offers an implementation of a port from `Pack.ports()` (its service, which satisfies the protocol
structurally); a pack that names the port in `needs` or `uses` finds it in `Setup.ports` (core/pack.py).
- The knowledge base, as the concept tools and the gateway's prompts read it: its documents, its newest
  index (documents, passages, the query encoder, the passages nearest a vector), its embedder, and
  `KnowledgeIndexError`, which its index raises when the vector store behind it refuses a call or cannot
  be reached.
- The classifier, as the gateway routes by it: the taxonomy's categories with their routing policy, and
  `classify`. Its saturation errors are the shared inference pool's (hexmcp.tools.embedding.inference_pool).

Cheap to import (typing alone): the knowledge base's vector stores load it at start-up for the error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np


# --- the knowledge base, as the concept tools read it ---------------------------------------------------


class KnowledgeDocument(Protocol):
    """One file of the corpus. `document_id` is its corpus-relative POSIX path; passages' offsets index `text`."""

    @property
    def document_id(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def text(self) -> str: ...


class KnowledgePassage(Protocol):
    """The unit the knowledge base indexes and cites: `text` is `document.text[start:end]`, under `headings`."""

    @property
    def passage_id(self) -> str: ...

    @property
    def document_id(self) -> str: ...

    @property
    def title(self) -> str:
        """The document's title."""

    @property
    def headings(self) -> tuple[str, ...]: ...

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...

    @property
    def text(self) -> str: ...


class KnowledgeIndex(Protocol):
    """One build of the corpus: read-only, replaced whole when the corpus changes (a new `version`)."""

    @property
    def version(self) -> str: ...

    @property
    def documents(self) -> Mapping[str, KnowledgeDocument]:
        """Every document, by its id."""

    @property
    def passages(self) -> Sequence[KnowledgePassage]: ...

    def embed_query(self, text: str) -> np.ndarray:
        """The query encoder's vector for `text` (L2-normalised)."""

    def nearest_passages(self, vector: np.ndarray, limit: int) -> list[tuple[KnowledgePassage, float]]:
        """The passages whose vectors are nearest `vector`, with their cosines, best first."""


class TextEmbedder(Protocol):
    @property
    def dimension(self) -> int: ...

    def embed_many(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dimension) float32, L2-normalised; a text's vector does not depend on the others."""


class KnowledgeBase(Protocol):
    @property
    def documents(self) -> Mapping[str, KnowledgeDocument]:
        """Every document read so far, by id."""

    def resource_uri(self, document_id: str) -> str:
        """The MCP resource URI a document is served under."""

    async def start(self) -> None:
        """Build the first index (the start-up hook); idempotent."""

    async def index(self) -> KnowledgeIndex:
        """The newest index, waiting for the first build. Raises KnowledgeIndexError."""

    @property
    def embedder(self) -> TextEmbedder:
        """The passage encoder, loaded by the first build."""


class KnowledgeIndexError(Exception):
    """The knowledge index cannot answer: the vector store behind it refused a call or could not be reached.

    `message` is fit for a client; `unavailable`: the store could not be reached, so a later call may succeed."""

    def __init__(self, message: str, *, unavailable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.unavailable = unavailable


# --- the classifier, as the gateway routes by it ---------------------------------------------------------


class CategoryRouting(Protocol):
    """A category's routing policy."""

    @property
    def model(self) -> str | None:
        """The recommended model; None: the classifier's default model."""

    @property
    def use_reasoning(self) -> bool | str:
        """True, False, or "auto" (decided per prompt)."""

    @property
    def reasoning_effort(self) -> str: ...


class ClassifierCategory(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def system_prompt(self) -> str: ...

    @property
    def routing(self) -> CategoryRouting: ...


class ClassifierTaxonomy(Protocol):
    @property
    def categories(self) -> Sequence[ClassifierCategory]:
        """In class-index order."""


class RoutingDefaults(Protocol):
    @property
    def default_model(self) -> str:
        """For categories whose policy names no model."""

    @property
    def fallback_model(self) -> str | None:
        """Recommended instead when the confidence is low; None: keep the category's."""


class Classifier(Protocol):
    @property
    def config(self) -> RoutingDefaults: ...

    async def ensure_taxonomy(self) -> ClassifierTaxonomy:
        """The taxonomy, loaded without waiting for the model."""

    async def classify(self, text: str, with_probabilities: bool = False, client: str | None = None
                       ) -> dict[str, Any]:
        """`{"class": index into the categories, "confidence", "model", "use_reasoning"}`, waiting for the model
        if it is still loading. Raises the shared inference pool's ServiceOverloadedError or RequestTimeoutError
        when saturated; `client` bounds how much of the queue one client may hold."""
