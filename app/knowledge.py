"""The knowledge base's flags and its HTTP /docs/ route, for the composition root (cli.py), which
alone imports the tools: this module sees the knowledge service only as a duck-typed object."""

from __future__ import annotations

import argparse
from typing import Any

DOCS_PREFIX = "/docs/"


def add_knowledge_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--docs", action="append", default=[], metavar="PATH",
                        help="a file or folder of .md/.mdx/.txt/.rst/.pdf documents for the knowledge tools "
                             "(repeatable; default: hexmcp's own README and ADRs)")
    parser.add_argument("--docs-include", action="append", default=[], metavar="GLOB",
                        help="only documents whose path under --docs matches (repeatable; * crosses /)")
    parser.add_argument("--docs-exclude", action="append", default=[], metavar="GLOB",
                        help="skip documents whose path under --docs matches (repeatable)")
    parser.add_argument("--docs-url-base", metavar="URL",
                        help="document URLs become URL + path (e.g. a repository's web view); default: this "
                             "server's /docs/<path> over HTTP, the resource URI over stdio")
    parser.add_argument("--vector-store", default="memory", metavar="SPEC",
                        help="where passage vectors live: memory (default), qdrant+path:DIR, "
                             "qdrant+http://HOST:PORT[?collection=NAME] (API key from $QDRANT_API_KEY)")
    parser.add_argument("--no-knowledge", action="store_true", help="serve without the knowledge tools")


def add_index_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to index (as --docs)")
    parser.add_argument("--docs-include", action="append", default=[], metavar="GLOB", help="as for serve")
    parser.add_argument("--docs-exclude", action="append", default=[], metavar="GLOB", help="as for serve")
    parser.add_argument("--quantization", choices=["int8", "fp32"], help="embedding model precision")
    parser.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])


def docs_route(knowledge: Any) -> dict[str, Any]:
    """The read-only /docs/ route over the knowledge service's documents (none without it)."""
    if knowledge is None:
        return {}
    from hexmcp.adapters.http.docs import DocsRoute

    async def lookup(document_id: str) -> tuple[str, str] | None:
        await knowledge.ensure_documents()
        document = knowledge.documents.get(document_id)
        return None if document is None else (document.text, _served_type(document.media_type))

    return {DOCS_PREFIX: DocsRoute(DOCS_PREFIX, lookup)}


def _served_type(media_type: str) -> str:
    return "text/plain" if media_type == "application/pdf" else media_type  # we serve the extracted text
