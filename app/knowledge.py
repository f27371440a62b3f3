"""`hexmcp index`: the knowledge base's passage index built ahead of time (resumable), with its flags."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

from hexmcp.tools.cache_dir import default_cache_dir


def add_index_flags(parser: argparse.ArgumentParser) -> None:
    from hexmcp.tools.knowledge.flags import add_corpus_filters, document_path

    parser.add_argument("paths", nargs="+", metavar="PATH", type=document_path, help="files or folders to index (as --docs)")
    add_corpus_filters(parser)
    parser.add_argument("--quantization", choices=["int8", "fp32", "int8row"], help="embedding model precision")
    parser.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])


def run_index(args: argparse.Namespace) -> int:
    """Index the paths; a missing path or nothing readable is the knowledge pack's one line (exit 2)."""
    from hexmcp.tools.knowledge.pack import KnowledgePack

    from .extras import require

    require("hexmcp index", "knowledge", KnowledgePack.extra_modules)
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        summary = _index(args)
    except KeyboardInterrupt as stop:
        print("hexmcp index: interrupted; finished documents are saved, run it again to resume", file=sys.stderr)
        return 128 + signal.SIGTERM if isinstance(stop, _Terminated) else 130
    except Exception as error:
        problem = KnowledgePack().explain(error)
        if problem is None:
            raise
        raise problem from error
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(summary.line())
    return 0


class _Terminated(KeyboardInterrupt):
    """SIGTERM (a container stopped, a job cancelled) ends the run as Ctrl-C does: the same line, the
    documents finished so far kept; by default it killed the process with nothing said."""


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise _Terminated


def _index(args: argparse.Namespace) -> Any:
    from hexmcp.tools.knowledge.corpus import CorpusSpec
    from hexmcp.tools.knowledge.indexing import index_corpus

    spec = CorpusSpec(roots=args.paths, include=args.docs_include, exclude=args.docs_exclude,
                      gitignore=not args.docs_no_gitignore)
    return index_corpus(spec, cache_dir=default_cache_dir(), quantization=args.quantization or "int8",
                        progress_stream=sys.stderr)
