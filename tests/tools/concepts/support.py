"""Building a concept base the way the service does, over a real index and the real embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from hexmcp.tools.concepts.base import ConceptBase
from hexmcp.tools.concepts.build import EvidenceCache, build_concept_base
from hexmcp.tools.concepts.glossary import Glossary
from hexmcp.tools.knowledge.builder import build_index, new_store
from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
from hexmcp.tools.knowledge.passages import SourceDocument


def base_over(documents: Sequence[SourceDocument], embedder, glossary: Glossary | None = None,
              cache: EvidenceCache | None = None) -> ConceptBase:
    index = build_index(list(documents), embedder, new_store(embedder.dimension))
    return build_concept_base(index.documents, index.passages, index.version, glossary or Glossary(),
                              embed_many=embedder.embed_many, dimension=embedder.dimension,
                              embed_query=index.embed_query, nearest_passages=index.nearest_passages, cache=cache)


def base_of(root: Path, embedder, glossary: Glossary | None = None) -> ConceptBase:
    return base_over(load_documents(CorpusSpec(roots=[root])), embedder, glossary)
