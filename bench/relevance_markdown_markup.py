"""Ablation: Markdown passages indexed with their markup kept, measured with bench.relevance; and what the markup
takes of MiniLM's 256-token window.

    python -m bench.relevance_markdown_markup [bench.relevance's options, e.g. --set kubernetes]
    python -m bench.relevance_markdown_markup --tokens [--set NAME ...]
    python -m bench.relevance_markdown_markup --build-time [--set NAME ...] [--rounds N]   # default: jest, 1

What `search` indexes and embeds of a Markdown passage has its markup cleaned out (link URLs, Hugo shortcodes,
MDX imports and JSX tags, admonition fences: tools/knowledge/markdown_markup.py). The first form runs
bench.relevance with every Markdown passage's raw text indexed instead, as before that change, the anchors' too
(they read the same passages); its vectors are keyed as they were then, so a cache built before the change is
read, not rebuilt. reST passages stay cleaned (ADR 0606; bench/relevance_rst_markup.py is their ablation).

`--tokens` embeds nothing: per set, the Markdown passages' indexed text (title, heading path and body) in
MiniLM's tokens, raw and cleaned: the mean, the share over the 256-token window, and the windows cut from them
(windows.py: the vectors a build embeds). `--build-time` indexes a set from scratch without the vector cache,
raw and cleaned alternately, and prints the seconds (run it under the exclusive machine lock).
The figures and the decision: bench/diaries/knowledge.md, docs/adr/0607-markdown-markup-cleaned-from-what-is-indexed.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Callable


def markup_kept() -> Callable[[], None]:
    """Markdown passages read raw, and their vectors keyed as before the cleaning (no reader version); returns
    what puts the cleaning back."""
    from hexmcp.tools.knowledge import chunking, readers

    version = readers.READER_VERSIONS.pop("text/markdown", None)
    cleaned = chunking._indexed_body  # noqa: SLF001 - the ablation replaces the one function that cleans

    def raw_markdown(media_type: str, text: str, open_fence: str = "") -> str | None:
        return None if media_type == "text/markdown" else cleaned(media_type, text, open_fence)

    def restore() -> None:
        chunking._indexed_body = cleaned  # noqa: SLF001
        if version is not None:
            readers.READER_VERSIONS["text/markdown"] = version

    chunking._indexed_body = raw_markdown  # type: ignore[assignment]  # noqa: SLF001
    return restore


def build_times(sets: list[str], rounds: int) -> None:
    """Each set indexed from scratch (no vector cache), raw and cleaned alternately: seconds and vectors."""
    import time

    from hexmcp.tools.knowledge.builder import build_index, new_store
    from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
    from hexmcp.tools.knowledge.embedder import PassageEmbedder

    from .relevance_sets import load_public_set

    embedder = PassageEmbedder.load()
    for name in sets or ["jest"]:
        documents = load_documents(CorpusSpec(roots=[str(load_public_set(name).corpus)]))
        seconds: dict[str, list[float]] = {"raw": [], "cleaned": []}
        vectors: dict[str, int] = {}
        for _ in range(rounds):
            for kind in ("raw", "cleaned"):
                restore = markup_kept() if kind == "raw" else (lambda: None)
                store = new_store(embedder.dimension)
                started = time.perf_counter()
                build_index(documents, embedder, store, cache_dir=None)
                seconds[kind].append(time.perf_counter() - started)
                vectors[kind] = len(store)
                restore()
        raw, cleaned = (statistics.median(seconds[k]) for k in ("raw", "cleaned"))
        print(f"{name}: raw {raw:.1f} s ({vectors['raw']} vectors), cleaned {cleaned:.1f} s "
              f"({vectors['cleaned']} vectors), cleaned/raw {cleaned / raw:.3f} (medians of {rounds}; "
              f"every round: raw {[round(s, 1) for s in seconds['raw']]}, cleaned {[round(s, 1) for s in seconds['cleaned']]})")


def token_counts(sets: list[str]) -> None:
    import attrs

    from hexmcp.tools.knowledge.chunking import chunk_document
    from hexmcp.tools.knowledge.corpus import CorpusSpec, load_documents
    from hexmcp.tools.knowledge.embedder import PASSAGE_MAX_TOKENS, PassageEmbedder
    from hexmcp.tools.knowledge.windows import passage_windows

    from .relevance_sets import PUBLIC_SETS, load_public_set

    embedder = PassageEmbedder.load()
    print(f"{'set':<11} {'passages':>8} {'tokens raw':>10} {'cleaned':>8} {'cut':>6} {'>256 raw':>9} "
          f"{'cleaned':>8} {'windows raw':>11} {'cleaned':>8}")
    for name in sets or PUBLIC_SETS:
        documents = load_documents(CorpusSpec(roots=[str(load_public_set(name).corpus)]))
        cleaned = [p for d in documents if d.media_type == "text/markdown" for p in chunk_document(d)]
        if not cleaned:
            print(f"{name:<11} no Markdown passages")
            continue
        raw = [attrs.evolve(p, indexed_body=None) for p in cleaned]
        tokens = {kind: [len(embedder.token_offsets(p.indexed_text())) for p in passages]
                  for kind, passages in (("raw", raw), ("cleaned", cleaned))}
        windows = {kind: sum(len(passage_windows(p, embedder.token_offsets, PASSAGE_MAX_TOKENS)) for p in passages)
                   for kind, passages in (("raw", raw), ("cleaned", cleaned))}
        over = {kind: sum(c > PASSAGE_MAX_TOKENS for c in counts) / len(counts) for kind, counts in tokens.items()}
        print(f"{name:<11} {len(cleaned):>8} {statistics.mean(tokens['raw']):>10.1f} "
              f"{statistics.mean(tokens['cleaned']):>8.1f} {1 - sum(tokens['cleaned']) / sum(tokens['raw']):>6.1%} "
              f"{over['raw']:>9.1%} {over['cleaned']:>8.1%} {windows['raw']:>11} {windows['cleaned']:>8}")


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--tokens" in args or "--build-time" in args:
        parser = argparse.ArgumentParser(description="Markdown passages' tokens, or build time, raw and cleaned")
        parser.add_argument("--tokens", action="store_true")
        parser.add_argument("--build-time", action="store_true")
        parser.add_argument("--rounds", type=int, default=1)
        parser.add_argument("--set", dest="sets", action="append", default=[])
        options = parser.parse_args(args)
        if options.tokens:
            token_counts(options.sets)
        else:
            build_times(options.sets, options.rounds)
        return 0
    from . import relevance

    markup_kept()
    return relevance.main(args)


if __name__ == "__main__":
    sys.exit(main())
