"""What each pass of a re-index costs after one edited file, in process (issue 31: the passes that still run over
every document or passage hold the GIL beside foreground requests).

    python -m bench.reindex_passes                     # django (bench/data/corpora), 20 re-indexes
    python -m bench.reindex_passes --rounds 40 --profile
    python -m bench.reindex_passes --corpus 10000      # generated tiny pages, as bench/watch_latency.py makes them

Passage vectors are hashed word counts (bench/knowledge_scale.py's stand-in), so what is timed is the build's
own Python and numpy, as a watched server runs it once the changed document is embedded. Each round edits one
page (alternating texts), reads it back with CorpusReader.read_changed and re-indexes with the serving index as
`previous`, as the knowledge service does. Reported per re-index, medians over the rounds: the whole
build_index call, the KnowledgeIndex built at its end, and, timed apart on the same inputs, the page catalogue
built from the previous one and from nothing. `--profile` adds cProfile's cumulative time per named pass
(inflated by the profiler's per-call cost, so read the shares, not the milliseconds).
Findings: bench/diaries/knowledge_scale.md.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.knowledge_scale import HashedPassageVectors
from bench.watch_latency import DJANGO, generate
from hexmcp.tools.knowledge.builder import DocumentMemo, build_index, new_store
from hexmcp.tools.knowledge.corpus import CorpusSpec
from hexmcp.tools.knowledge.corpus_reader import CorpusReader
from hexmcp.tools.knowledge.service import CorpusChange
from hexmcp.tools.knowledge.versions import PageCatalog

DIMENSION = 384
#: Functions whose cumulative time --profile reports (module-qualified name endings).
PASSES = ("builder.py:build_index", "retrieval.py:__init__", "versions.py:__init__", "versions.py:_similar_groups",
          "versions.py:_join_identical", "versions.py:_preferred_order", "versions.py:page_key",
          "versions.py:_attach_unversioned_roots", "retrieval.py:_numbers_of", "retrieval.py:_places",
          "retrieval.py:_kept_run", "lexical.py:__init__", "bm25_matrix.py:install", "builder.py:chunked",
          "builder.py:index_version", "builder.py:add_held")


class _QueryStandIn:
    """What HashedPassageVectors asks of the real model; a re-index never embeds a query."""

    model_key = "stand-in"
    dimension = DIMENSION
    token_offsets = None

    @staticmethod
    def embed(text: str):
        raise AssertionError("a re-index embeds no query")


def reread(reader: CorpusReader, pages: list[Path], store) -> frozenset[str]:
    """Read the changed `pages` back and drop the store's rows of documents they replaced or removed, as the
    knowledge service does before a re-index; the ids of the documents the store still holds unchanged."""
    before = reader.documents
    reader.read_changed({str(page) for page in pages})
    return CorpusChange.between(before, reader.documents).clear_from(store, reader.documents.keys())


def _edit(page: Path, original: str, n: int) -> None:
    page.write_text(original + f"\n\nEdited paragraph {n % 3}: configure the cache middleware.\n")


def run(corpus: str, rounds: int, profile: bool) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "docs"
        if corpus.isdigit():
            generate(root, int(corpus))
            page = root / "f0000" / "p0.md"
        else:
            shutil.copytree(DJANGO if corpus == "django" else Path(corpus), root)
            page = root / "topics" / "cache.txt" if corpus == "django" else sorted(root.rglob("*.*"))[0]
        original = page.read_text()
        reader = CorpusReader(CorpusSpec(roots=[root]))
        reader.read_all()
        embedder, memo = HashedPassageVectors(_QueryStandIn()), DocumentMemo()
        store = new_store(DIMENSION)
        index = build_index(list(reader.documents.values()), embedder, store, memo=memo)
        profiler = cProfile.Profile() if profile else None
        whole, built, catalogue_kept, catalogue_fresh = [], [], [], []
        for n in range(rounds + 2):  # the first two warm the memo's and the catalogue's caches
            _edit(page, original, n)
            stored = reread(reader, [page], store)
            documents = list(reader.documents.values())
            if profiler is not None and n >= 2:
                profiler.enable()
            started = time.perf_counter()
            new = build_index(documents, embedder, store, memo=memo, stored=stored, previous=index)
            took = time.perf_counter() - started
            if profiler is not None:
                profiler.disable()
            started = time.perf_counter()
            PageCatalog(new.documents.values(), None, index.pages)
            kept = time.perf_counter() - started
            started = time.perf_counter()
            PageCatalog(new.documents.values())
            fresh = time.perf_counter() - started
            index = new
            if n >= 2:
                whole.append(took)
                catalogue_kept.append(kept)
                catalogue_fresh.append(fresh)
        # The KnowledgeIndex alone, from the index before it (what each snapshot of a re-index costs).
        for _ in range(rounds):
            started = time.perf_counter()
            index = type(index)(list(index.documents.values()), index.passages, None, store, index.version,
                                previous=index)
            built.append(time.perf_counter() - started)
        result = {"corpus": corpus, "documents": len(index.documents), "passages": len(index.passages), "rounds": rounds,
                  "build_index_ms": _ms(whole), "knowledge_index_ms": _ms(built),
                  "catalogue_from_previous_ms": _ms(catalogue_kept), "catalogue_fresh_ms": _ms(catalogue_fresh)}
        if profiler is not None:
            result["profile_cumulative_ms_per_reindex"] = _passes(profiler, rounds)
        return result


def _ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def _passes(profiler: cProfile.Profile, rounds: int) -> dict[str, float]:
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    found: dict[str, float] = {}
    for (filename, _line, function), (_cc, _nc, _tt, cumulative, _callers) in stats.items():
        name = f"{Path(filename).name}:{function}"
        if name in PASSES:
            found[name] = found.get(name, 0.0) + cumulative
    return {name: round(found[name] / rounds * 1000, 2) for name in PASSES if name in found}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="django", help="django, a folder, or a number of generated pages")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--profile", action="store_true", help="cProfile's cumulative time per named pass")
    args = parser.parse_args()
    print(json.dumps(run(args.corpus, args.rounds, args.profile), indent=2))


if __name__ == "__main__":
    main()
