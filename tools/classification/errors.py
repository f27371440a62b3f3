"""Errors raised by the classification tool, each naming what the caller must fix."""

from __future__ import annotations

from hexmcp.tools.user_files import UserFileError


class ClassificationError(Exception):
    """Base class: anything the classification tool raises on purpose (besides the shared encoder's
    errors, hexmcp.tools.embedding.errors, which it passes on)."""


class CacheDirError(ClassificationError):
    """The cache directory cannot be created, read or written; `path` names it."""

    def __init__(self, path: object, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"the cache directory {self.path} is unusable: {reason}")


class TaxonomyError(ClassificationError, UserFileError):
    """A taxonomy file is malformed. The message names the file, the line (when known) and why."""


class ClassificationInputError(ClassificationError):
    """A classify request carries an unusable argument; `field` names it for the client, `details` says
    more where a number helps (the limit and the length of a text that is too long)."""

    def __init__(self, field: str, message: str, details: dict[str, int] | None = None) -> None:
        self.field = field
        self.message = message
        self.details = details or {}
        super().__init__(f"{field}: {message}")
