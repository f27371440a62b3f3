"""Errors raised by the classification tool, each naming what the caller must fix."""

from __future__ import annotations


class ClassificationError(Exception):
    """Base class: anything the classification tool raises on purpose."""


class ModelFilesError(ClassificationError):
    """The bundled embedding model cannot be found or read."""


class ModelCacheError(ClassificationError):
    """The converted ONNX model could not be built, written or loaded."""


class TaxonomyError(ClassificationError):
    """A taxonomy file is malformed. The message names the file, the line (when known) and why."""

    def __init__(self, path: object, reason: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


class ClassificationInputError(ClassificationError):
    """A classify request carries an unusable argument; `field` names it for the client."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


class ServiceNotReadyError(ClassificationError):
    """classify() was called before start() finished."""
