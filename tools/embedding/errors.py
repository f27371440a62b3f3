"""Errors raised by the shared encoder, each naming what the caller must fix."""

from __future__ import annotations


class EmbeddingError(Exception):
    """Base class: anything the shared encoder (its model files, its cache, its inference pool) raises on purpose."""


class ModelFilesError(EmbeddingError):
    """The bundled embedding model cannot be found or read. `package_missing` tells a package that is not
    installed at all from one installed without some of its files (the fix differs)."""

    def __init__(self, message: str, *, package_missing: bool = False) -> None:
        self.package_missing = package_missing
        super().__init__(message)


class ModelCacheError(EmbeddingError):
    """The converted ONNX model could not be built, written or loaded."""


class ServiceNotReadyError(EmbeddingError):
    """A call came before the service behind it started, or after it began shutting down."""
