"""Errors of the knowledge base, raised as values the MCP layer maps to protocol errors."""

from __future__ import annotations


class KnowledgeError(Exception):
    """Base class."""


class CorpusError(KnowledgeError):
    """A --docs path that does not exist, or a corpus with nothing readable in it."""


class UnknownIdError(KnowledgeError):
    def __init__(self, kind: str, identifier: str) -> None:
        super().__init__(f"unknown {kind} id {identifier!r}")
        self.kind = kind
        self.identifier = identifier


class QueryError(KnowledgeError):
    """An empty, whitespace-only or oversize query."""


class IndexingCancelled(KnowledgeError):
    """The server stopped while embedding; finished documents are cached, the rest resume later."""
