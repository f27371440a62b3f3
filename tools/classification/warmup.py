"""`python -m hexmcp.tools.classification.warmup`: fill the cache so a server starts in about a second.

Converts the embedding model to ONNX (int8, and fp32 with `--fp32`), embeds the taxonomy's examples and
trains the head once, all into `$HEXMCP_CACHE_DIR` (default `~/.cache/hexmcp`). A container image runs
this at build time (deploy/Dockerfile), so no instance converts the model at start-up; the converted
file's name carries the weights' digest and the converter's version, so a stale cache is never used.
Exit status 0 on success; otherwise the one-line reason on stderr and status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from hexmcp.core.log import configure_logging
from hexmcp.tools.embedding.errors import EmbeddingError

from .config import ClassificationConfig
from .errors import ClassificationError
from .service import ClassificationService


def warm(quantization: str) -> float:
    """Prepare and start a service at `quantization` once; the seconds it took."""
    started = time.perf_counter()
    service = ClassificationService.from_config(ClassificationConfig(quantization=quantization))
    service.prepare_model()
    try:
        asyncio.run(service.start())
    finally:
        service.shutdown()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hexmcp.tools.classification.warmup",
                                     description="convert the model and fill hexmcp's cache ahead of time")
    parser.add_argument("--fp32", action="store_true", help="also the fp32 model (for --quantization fp32)")
    args = parser.parse_args(argv)
    configure_logging("info")  # progress lines on stderr, as a server's
    try:
        for quantization in ("int8", "fp32") if args.fp32 else ("int8",):
            print(f"warm-up: {quantization} model ready in {warm(quantization):.1f} s", file=sys.stderr)
    except (ClassificationError, EmbeddingError) as error:
        print(f"warm-up: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
