"""The knowledge pack's flags and the settings they make."""

from __future__ import annotations

import argparse
from typing import Any


def document_path(text: str) -> str:
    """argparse type for --docs and `hexmcp index`'s paths: not empty. Path("") is the current directory,
    so `--docs "$UNSET_VARIABLE"` indexed whatever folder the server was started in."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a file or folder, got an empty string")
    return text


def add_knowledge_flags(flags: argparse._ArgumentGroup) -> None:
    flags.add_argument("--docs", action="append", default=[], metavar="PATH", type=document_path,
                       help="a file or folder of .md/.mdx/.txt/.rst/.pdf/.html documents for the knowledge tools "
                            "(repeatable; default: hexmcp's own README and ADRs)")
    add_corpus_filters(flags)
    flags.add_argument("--docs-url-base", metavar="URL",
                       help="document URLs become URL + path (e.g. a repository's web view); default: this "
                            "server's /docs/<path> over HTTP, the resource URI over stdio")
    flags.add_argument("--docs-version", metavar="LABEL",
                       help="the version whose copy of a versioned page answers for it (e.g. 2.1, v3, draft); "
                            "default: the newest release among the copies")
    flags.add_argument("--vector-store", default="memory", metavar="SPEC",
                       help="where passage vectors live: memory (default), qdrant-edge+path:DIR (Qdrant's engine "
                            "in process), qdrant+path:DIR, qdrant+http://HOST:PORT[?collection=NAME] (API key "
                            "from $QDRANT_API_KEY)")
    flags.add_argument("--no-knowledge", action="store_true", help="serve without the knowledge tools")


def add_corpus_filters(flags: Any) -> None:
    flags.add_argument("--docs-include", action="append", default=[], metavar="GLOB",
                       help="only documents whose path under --docs matches (repeatable; * crosses /)")
    flags.add_argument("--docs-exclude", action="append", default=[], metavar="GLOB",
                       help="skip documents whose path under --docs matches (repeatable)")
    flags.add_argument("--docs-no-gitignore", action="store_true",
                       help="also index files that the --docs folders' .gitignore files (and .git/info/exclude) "
                            "ignore; by default they are skipped")


def knowledge_config(settings: argparse.Namespace) -> Any:
    from .corpus import CorpusSpec
    from .service import KnowledgeConfig

    return KnowledgeConfig(corpus=CorpusSpec(roots=settings.docs, include=settings.docs_include,
                                             exclude=settings.docs_exclude,
                                             gitignore=not getattr(settings, "docs_no_gitignore", False)),
                           url_base=settings.docs_url_base, quantization=getattr(settings, "quantization", None) or "int8",
                           vector_store=settings.vector_store,
                           preferred_version=getattr(settings, "docs_version", None))
