"""Vector stores behind one port: an in-process default and a real vector database adapter."""

from .port import VectorHit, VectorStore

__all__ = ["VectorHit", "VectorStore"]
