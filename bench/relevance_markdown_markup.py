"""Markdown passages indexed with their markup cleaned out (bench/markdown_markup.py), measured with
bench.relevance or bench.concepts; what the markup takes of MiniLM's 256-token window; and the build time.

    python -m bench.relevance_markdown_markup [--link-words] [bench.relevance's options, e.g. --set kubernetes]
    python -m bench.relevance_markdown_markup --concepts [--link-words] [bench.concepts' options, e.g. --public]
    python -m bench.relevance_markdown_markup --tokens [--set NAME ...]
    python -m bench.relevance_markdown_markup --build-time [--set NAME ...] [--rounds N]   # default: jest, 1

`search` indexes a Markdown passage's raw text (title and heading path in front). This runs bench.relevance
(or bench.concepts) with what the retrievers read of every Markdown passage cleaned instead, as ADR 0606 does
for reST: link URLs, Hugo shortcodes, MDX imports and JSX tags, admonition fences and HTML comments out, their
visible text kept, the passage text cited unchanged. The anchors read the same passages, so theirs change too.
`--link-words`: a link's target adds the words of its last path segment and fragment (the variant measured).
The vectors get cache keys of their own. Plain `python -m bench.relevance` is the control.

`--tokens` embeds nothing: per set, the Markdown passages' indexed text in MiniLM's tokens, raw and cleaned: the
mean, the share over the 256-token window, and the windows cut from them (windows.py: the vectors a build
embeds). `--build-time` indexes a set from scratch without the vector cache, raw and cleaned alternately, and
prints the seconds (run it under the exclusive machine lock).
The figures and why it is not served: bench/diaries/knowledge.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any, Callable


def markup_cleaned(link_words: bool = False) -> Callable[[], None]:
    """Markdown passages indexed cleaned, under vector-cache keys of their own; returns what undoes it."""
    import attrs

    from hexmcp.tools.knowledge import builder, chunking, indexing, readers

    from .markdown_markup import clean_markdown, open_fences

    served = chunking.chunk_document
    modules = (chunking, builder, indexing)

    def cleaned_chunks(document: Any, max_chars: int = chunking.DEFAULT_MAX_CHARS) -> tuple[Any, ...]:
        passages = served(document, max_chars)
        if document.media_type != "text/markdown":
            return passages
        fences = open_fences(document.text, [p.start for p in passages])
        bodies = [clean_markdown(p.text, fence, link_words) for p, fence in zip(passages, fences)]
        # a passage of markup alone keeps its source, as chunking does for reST
        return tuple(attrs.evolve(p, indexed_body=body if body.strip() else None) for p, body in zip(passages, bodies))

    readers.READER_VERSIONS["text/markdown"] = "markup-cleaned" + ("+link-words" if link_words else "")

    def restore() -> None:
        readers.READER_VERSIONS.pop("text/markdown", None)
        for module in modules:
            module.chunk_document = served  # type: ignore[attr-defined]

    for module in modules:
        module.chunk_document = cleaned_chunks  # type: ignore[attr-defined]
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
                restore = markup_cleaned() if kind == "cleaned" else (lambda: None)
                store = new_store(embedder.dimension)
                started = time.perf_counter()
                build_index(documents, embedder, store, cache_dir=None)
                seconds[kind].append(time.perf_counter() - started)
                vectors[kind] = len(store)
                restore()
        raw, cleaned = (statistics.median(seconds[k]) for k in ("raw", "cleaned"))
        print(f"{name}: raw {raw:.1f} s ({vectors['raw']} vectors), cleaned {cleaned:.1f} s "
              f"({vectors['cleaned']} vectors), cleaned/raw {cleaned / raw:.3f} (medians of {rounds}; "
              f"every round: raw {[round(s, 1) for s in seconds['raw']]}, "
              f"cleaned {[round(s, 1) for s in seconds['cleaned']]})")


def token_counts(sets: list[str]) -> None:
    from hexmcp.tools.knowledge import chunking
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
        raw = [p for d in documents if d.media_type == "text/markdown" for p in chunk_document(d)]
        if not raw:
            print(f"{name:<11} no Markdown passages")
            continue
        restore = markup_cleaned()
        cleaned = [p for d in documents if d.media_type == "text/markdown" for p in chunking.chunk_document(d)]
        restore()
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
    link_words = "--link-words" in args
    args = [a for a in args if a != "--link-words"]
    markup_cleaned(link_words)
    if "--concepts" in args:
        from . import concepts

        return concepts.main([a for a in args if a != "--concepts"])
    from . import relevance

    return relevance.main(args)


if __name__ == "__main__":
    sys.exit(main())
