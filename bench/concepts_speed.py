"""Concept tool speed on a synthetic 50,000-passage corpus: resolveConcept, explainConcept and
queryGraph(depth 2) medians (targets: p50 < 20 ms, < 20 ms, < 50 ms), plus the build's cost.

    .venv/bin/python -m bench.concepts_speed [--passages 50000] [--queries 200] [--keyphrases]

The corpus: Markdown documents of 10 sections each, over a vocabulary of generated two-word terms
(headings, bold definitions, acronyms, links and running text that mention other terms). Passage vectors
are synthetic (clustered unit vectors, as in bench/search.py: embedding 50,000 passages would take an
hour here); query and concept-title vectors come from the real MiniLM encoder, so each resolve pays a
real query embedding. YAKE key phrases are off unless --keyphrases (they cost ~20 µs a character:
minutes at this size; bench/concepts.py --docs times them on a real corpus). Prints medians; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

import numpy as np

from hexmcp.tools.concepts import extraction
from hexmcp.tools.concepts.build import build_concept_base
from hexmcp.tools.concepts.explain import explain
from hexmcp.tools.concepts.glossary import Glossary
from hexmcp.tools.concepts.resolver import resolve
from hexmcp.tools.knowledge.chunking import chunk_document
from hexmcp.tools.knowledge.embedder import PassageEmbedder
from hexmcp.tools.knowledge.readers import parse_text
from hexmcp.tools.knowledge.retrieval import KnowledgeIndex
from hexmcp.tools.knowledge.vectors import MemoryVectorStore

from .search import DIMENSION, clustered_rows

SECTIONS = 10
SYLLABLES = ["ka", "lo", "mi", "ren", "tor", "vex", "qua", "sil", "dor", "fen", "gra", "hul", "jin", "pem", "zor"]


def vocabulary(size: int, rng: random.Random) -> list[str]:
    words = sorted({a + b + c for a in SYLLABLES for b in SYLLABLES for c in SYLLABLES})
    terms: set[str] = set()
    while len(terms) < size:
        terms.add(f"{rng.choice(words)} {rng.choice(words)}")
    return sorted(terms)


def document(number: int, terms: list[str], rng: random.Random, documents: int) -> str:
    topic = terms[number % len(terms)]
    parts = [f"# {topic.title()}\n", f"The **{topic}** is the subject of this page."]
    for section in range(SECTIONS - 1):
        term = rng.choice(terms)
        others = rng.sample(terms, 4)
        acronym = "".join(w[0] for w in term.split()).upper() + str(section)
        parts.append(f"\n## {term.title()}\n\nThe **{term}** ({acronym}) is where the {others[0]} meets the "
                     f"{others[1]}. See [{others[2]}](doc{rng.randrange(documents)}.md) before changing the "
                     f"{others[3]}; the {term} keeps both in step and reports to the {topic}.")
    return "\n".join(parts)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keyphrases", action="store_true", help="run YAKE too (slow at this size)")
    args = parser.parse_args(argv)
    if not args.keyphrases:
        extraction._keyphrases = lambda document, locate: ()  # type: ignore[assignment]
    rng = random.Random(16)
    documents_count = max(1, args.passages // SECTIONS)
    terms = vocabulary(max(200, documents_count), rng)
    started = time.perf_counter()
    documents = [parse_text(f"doc{i}.md", document(i, terms, rng, documents_count), ".md") for i in range(documents_count)]
    passages = [p for d in documents for p in chunk_document(d)]
    store = MemoryVectorStore(DIMENSION)
    store.upsert([p.passage_id for p in passages], clustered_rows(len(passages), 7), [p.document_id for p in passages])
    embedder = PassageEmbedder.load()
    index = KnowledgeIndex(documents, passages, embedder.embed, store, "bench")
    print(f"{len(documents)} documents, {len(passages)} passages (corpus and synthetic vectors: "
          f"{time.perf_counter() - started:.1f} s)")
    base = build_concept_base(index.documents, index.passages, index.version, Glossary(),
                              embed_many=embedder.embed_many, dimension=embedder.dimension,
                              embed_query=index.embed_query, nearest_passages=index.nearest_passages)
    stats = base.stats
    assert stats is not None
    print(f"concept build {stats.total_seconds:.1f} s (extraction {stats.extraction_seconds:.1f} s"
          f"{'' if args.keyphrases else ', no key phrases'}): {stats.concepts} concepts, {stats.edges} edges")
    ids = [rng.choice(base.order) for _ in range(args.queries)]
    queries = [base.concepts[i].title for i in ids]  # names: the alias stage
    mangled = [q[:3] + q[4:] for q in queries]  # one letter dropped: the fuzzy stage (or semantic, if too far)
    described = [f"the part where the {rng.choice(terms)} meets something" for _ in ids]  # the semantic stage
    rows = []
    for name, run in [("resolveConcept (alias)", lambda i: resolve(base, queries[i])),
                      ("resolveConcept (misspelt)", lambda i: resolve(base, mangled[i])),
                      ("resolveConcept (description)", lambda i: resolve(base, described[i])),
                      ("explainConcept", lambda i: explain(base, ids[i])),
                      ("queryGraph depth 2, limit 50", lambda i: base.graph.neighbourhood(ids[i], 2, None, 50)),
                      ("queryGraph depth 2, limit 500", lambda i: base.graph.neighbourhood(ids[i], 2, None, 500))]:
        run(0)  # warm
        samples = []
        for i in range(args.queries):
            begun = time.perf_counter()
            run(i)
            samples.append(time.perf_counter() - begun)
        rows.append((name, median_ms(samples), float(np.percentile(samples, 99)) * 1000))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{'call':<32} {'p50 ms':>8} {'p99 ms':>8}   (load average {load} on {os.cpu_count()} cores)")
    for name, p50, p99 in rows:
        print(f"{name:<32} {p50:>8.2f} {p99:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
