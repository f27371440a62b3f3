"""The built concept base: everything the concept tools read, immutable once built (a rebuilt index
gives a new ConceptBase, swapped in whole, like the knowledge index)."""

from __future__ import annotations

from typing import Callable, Sequence

import attrs
import numpy as np

from hexmcp.tools.ports import KnowledgePassage

from .errors import UnknownConceptError
from .graph import ConceptGraph
from .mentions import AliasIndex
from .model import Concept
from .text import ACRONYM, initials_of

EmbedQuery = Callable[[str], np.ndarray]
NearestPassages = Callable[[np.ndarray, int], list[tuple[KnowledgePassage, float]]]


@attrs.frozen(kw_only=True)
class Support:
    """A passage that supports a concept: how often it names it, and whether it defines it there."""

    passage: KnowledgePassage
    mentions: int
    defines: bool
    strength: float = 0.0  # how strongly it defines it (defining.py), 0 when it only mentions it


@attrs.frozen(kw_only=True)
class BuildStats:
    documents: int
    passages: int
    evidence: int
    concepts: int
    edges: int
    extracted_documents: int  # documents read this build (the others came from the per-document cache)
    extraction_seconds: float
    total_seconds: float


class ConceptBase:
    def __init__(self, *, version: str, index_version: str, concepts: Sequence[Concept], vectors: np.ndarray,
                 support: dict[str, tuple[Support, ...]], frequency: dict[str, int], passages_total: int,
                 aliases: AliasIndex, graph: ConceptGraph, embed_query: EmbedQuery | None,
                 nearest_passages: NearestPassages | None, stats: BuildStats | None = None,
                 representative: dict[str, str] | None = None) -> None:
        """`representative`: a passage's id → the id of the copy that stands for it (copies of a page fold
        into one passage per place in `support`; the dense index still returns any copy)."""
        self.version = version
        self.index_version = index_version
        self.concepts = {c.id: c for c in concepts}
        self.order = [c.id for c in concepts]
        self.row_of = {concept_id: row for row, concept_id in enumerate(self.order)}
        self.vectors = vectors
        self.support = support
        self.frequency = frequency
        self.passages_total = passages_total
        self.aliases = aliases
        self.graph = graph
        self.embed_query = embed_query
        self.nearest_passages = nearest_passages
        self.stats = stats
        defined_by: dict[str, list[str]] = {}
        for concept_id, rows in support.items():
            for row in rows:
                if row.defines:
                    defined_by.setdefault(row.passage.passage_id, []).append(concept_id)
        self._defined_by = {passage_id: tuple(ids) for passage_id, ids in defined_by.items()}
        self._representative = representative or {}
        # Acronym ↔ expansion where the corpus never wrote them side by side ("server-side rendering", "SSR").
        self.acronyms: dict[str, list[str]] = {}  # "SSR" → concepts named by it
        self.initials: dict[str, list[str]] = {}  # "SSR" → concepts whose several-word names it abbreviates
        for concept in concepts:
            for name in dict.fromkeys([concept.title, *concept.aliases]):
                if ACRONYM.match(name):
                    self.acronyms.setdefault(name.rstrip("s").upper(), []).append(concept.id)
                elif len(initials_of(name)) >= 3:
                    self.initials.setdefault(initials_of(name), []).append(concept.id)
        self.fuzzy_choices: list[str] = []
        self.fuzzy_owner: list[str] = []
        for concept in concepts:
            for name in dict.fromkeys([concept.title.lower(), concept.id.replace("-", " "),
                                       *(a.lower() for a in concept.aliases)]):
                self.fuzzy_choices.append(name)
                self.fuzzy_owner.append(concept.id)

    def __len__(self) -> int:
        return len(self.order)

    def get(self, concept_id: str) -> Concept:
        concept = self.concepts.get(concept_id)
        if concept is None:
            from .spelling import nearest_ids

            raise UnknownConceptError(concept_id, nearest_ids(self.fuzzy_choices, self.fuzzy_owner, self.order,
                                                              concept_id, 3))
        return concept

    def defined_by(self, passage_id: str) -> tuple[str, ...]:
        """The concepts a passage defines (a heading it sits under, a definition it holds)."""
        return self._defined_by.get(self._representative.get(passage_id, passage_id), ())

    def vector(self, concept_id: str) -> np.ndarray:
        return self.vectors[self.row_of[concept_id]]
