"""Markdown passages indexed with their markup cleaned out (bench/markdown_markup_variants.py), measured with
bench.relevance or bench.concepts; what the markup takes of MiniLM's 256-token window; and the build time.

    python -m bench.relevance_markdown_markup [VARIANT] [bench.relevance's options, e.g. --set kubernetes]
    python -m bench.relevance_markdown_markup --concepts [VARIANT] [bench.concepts' options, e.g. --public]
    python -m bench.relevance_markdown_markup --tokens [VARIANT] [--set NAME ...]
    python -m bench.relevance_markdown_markup --build-time [--set NAME ...] [--rounds N]   # default: jest, 1

`search` indexes a Markdown passage with MDX's syntax cleaned out (ADR 0607). This runs bench.relevance
(or bench.concepts) with what the retrievers read of every Markdown passage cleaned instead, as ADR 0606 does
for reST: link URLs, Hugo shortcodes, MDX imports and JSX tags, admonition fences and HTML comments out, their
visible text kept, the passage text cited unchanged. The anchors read the same passages, so theirs change too.
VARIANT, at most one: `--link-words`, a link's target adds the words of its last path segment and fragment;
`--keep-shortcodes`, all cleaned but Hugo's shortcodes, left as written; `--mdx-only`, MDX's syntax alone
cleaned (imports/exports, JSX/HTML tags, `{/* */}`, `{#id}`, `:::` fences), Markdown and shortcodes as written.
The vectors' cache keys follow the text embedded, so theirs are their own. Plain `python -m bench.relevance` is the control.

`--tokens` embeds nothing: per set, the Markdown passages' indexed text in MiniLM's tokens, raw and cleaned: the
mean, the share over the 256-token window, and the windows cut from them (windows.py: the vectors a build
embeds). `--build-time` indexes a set from scratch without the vector cache, served and cleaned alternately, and
prints the seconds (run it under the exclusive machine lock).
The figures, and why only `--mdx-only`'s form is served: bench/diaries/knowledge.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any, Callable


#: The variants' switches: the clean_markdown keyword each sets.
VARIANTS = {"--link-words": "link_words", "--keep-shortcodes": "keep_shortcodes", "--mdx-only": "mdx_only"}


def markup_cleaned(variant: str = "") -> Callable[[], None]:
    """Markdown passages indexed cleaned (their vectors keyed by that text); returns what undoes it.
    `variant`: one of VARIANTS' keywords (clean_markdown's), or "" for the whole cleaning."""
    import attrs

    from hexmcp.tools.knowledge import builder, chunking, indexing
    from hexmcp.tools.knowledge.markdown_markup import open_fences

    from .markdown_markup_variants import clean_markdown

    switch = {variant: True} if variant else {}

    served = chunking.chunk_document
    modules = (chunking, builder, indexing)

    def cleaned_chunks(document: Any, max_chars: int = chunking.DEFAULT_MAX_CHARS) -> tuple[Any, ...]:
        passages = served(document, max_chars)
        if document.media_type != "text/markdown":
            return passages
        fences = open_fences(document.text, [p.start for p in passages])
        bodies = [clean_markdown(p.text, fence, **switch) for p, fence in zip(passages, fences)]
        # a passage of markup alone keeps its source, as chunking does for reST
        return tuple(attrs.evolve(p, indexed_body=body if body.strip() else None) for p, body in zip(passages, bodies))

    def restore() -> None:
        for module in modules:
            module.chunk_document = served  # type: ignore[attr-defined]

    for module in modules:
        module.chunk_document = cleaned_chunks  # type: ignore[attr-defined]
    return restore


def build_times(sets: list[str], rounds: int) -> None:
    """Each set indexed from scratch (no vector cache), as served ("raw": MDX's syntax alone cleaned, ADR 0607)
    and wholly cleaned alternately: seconds and vectors."""
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


def token_counts(sets: list[str], variant: str = "") -> None:
    import attrs

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
        # raw: the source as written (the served chunking cleans MDX's syntax out of it)
        raw = [attrs.evolve(p, indexed_body=None)
               for d in documents if d.media_type == "text/markdown" for p in chunk_document(d)]
        if not raw:
            print(f"{name:<11} no Markdown passages")
            continue
        restore = markup_cleaned(variant)
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
    chosen = [VARIANTS[a] for a in args if a in VARIANTS]
    if len(chosen) > 1:
        raise SystemExit(f"at most one of {', '.join(VARIANTS)}")
    variant = chosen[0] if chosen else ""
    args = [a for a in args if a not in VARIANTS]
    if "--tokens" in args or "--build-time" in args:
        parser = argparse.ArgumentParser(description="Markdown passages' tokens, or build time, raw and cleaned")
        parser.add_argument("--tokens", action="store_true")
        parser.add_argument("--build-time", action="store_true")
        parser.add_argument("--rounds", type=int, default=1)
        parser.add_argument("--set", dest="sets", action="append", default=[])
        options = parser.parse_args(args)
        if options.tokens:
            token_counts(options.sets, variant)
        else:
            build_times(options.sets, options.rounds)
        return 0
    markup_cleaned(variant)
    if "--concepts" in args:
        from . import concepts

        return concepts.main([a for a in args if a != "--concepts"])
    from . import relevance

    return relevance.main(args)


if __name__ == "__main__":
    sys.exit(main())
