"""Errors of the concept tools, each naming what the caller must fix."""

from __future__ import annotations

from hexmcp.tools.user_files import UserFileError


class ConceptError(Exception):
    """Base class."""


class ConceptBuildStopped(ConceptError):
    """Raised in the build thread, between two documents, once the server is stopping: the thread cannot be
    killed, and the interpreter waits for it before exiting."""


class GlossaryError(ConceptError, UserFileError):
    """A --glossary file is unusable: the message names the file, the line (when known) and why; the
    command exits with ExitCode.USAGE (2) before serving."""


class UnknownConceptError(ConceptError):
    def __init__(self, concept_id: str, nearest: list[str]) -> None:
        hint = f"; nearest: {', '.join(nearest)}" if nearest else ""
        super().__init__(f"unknown concept id {concept_id!r}{hint} (resolveConcept finds ids by name)")
        self.concept_id = concept_id
        self.nearest = nearest
