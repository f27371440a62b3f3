"""Exit codes of the `hexmcp` command, and the failure a start-up hook reports to its adapter.

The composition root checks what it can before any adapter serves (and exits with one of these codes);
work that can only run once serving has begun (loading the model) runs in a background hook. A hook that
raises `StartupFailure` names the reason an operator should read; the adapter reports it (/health says
"failed") and the process exits with `ExitCode.FAILED_AFTER_START`, so it never sits half-started.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0  # served, then stopped cleanly (EOF on stdin, SIGINT, SIGTERM)
    FAILED_AFTER_START = 1  # start-up work failed after the port was bound or the stdio session began
    USAGE = 2  # a bad flag, flag value, --taxonomy file, --glossary file, --docs path, --vector-store spec, or a
    #           --host/--port that cannot be bound (in use, not permitted)
    MODEL_PACKAGE_MISSING = 3  # the embedding model package is not installed, or is incomplete
    CACHE_DIR_UNUSABLE = 4  # HEXMCP_CACHE_DIR (or the default) cannot be created, read or written
    MODEL_BUILD_FAILED = 5  # the ONNX model could not be converted or verified


class StartupFailure(Exception):
    """Raised by a start-up hook: `reason` is one line fit for /health and an operator's terminal."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def failure_reason(error: BaseException, event_id: str) -> str:
    """What to report for a failed hook: its own reason, or a pointer into the log for anything else."""
    if isinstance(error, StartupFailure):
        return error.reason
    return f"start-up failed; see the log for eventId {event_id}"
