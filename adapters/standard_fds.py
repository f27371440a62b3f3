"""Descriptors 0-2 open before anything is written: a host may start hexmcp with one of them closed.

`hexmcp serve 2>&-` (or a supervisor that closes stderr) left fd 2 closed: the first log line raised and the
server exited 1 without a word; under `hexmcp stdio`, a closed fd 2 would have made the protocol's private
duplicate of fd 1 land on number 2, and every log line would have gone into the stream the host reads.
"""

from __future__ import annotations

import os
import sys


def fill_closed_standard_fds() -> None:
    """Open the null device on whichever of fds 0-2 is closed, and give Python a `sys.stderr` if it had none."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)  # the lowest free number: `fd`, every lower one being open
            if null != fd:  # cannot happen, but a wrong guess must not leave `fd` closed
                os.dup2(null, fd)
                os.close(null)
    if sys.stderr is None:  # Python found fd 2 closed at start; the log and the printed lines write here
        sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)
    if sys.stdout is None:  # likewise fd 1: `hexmcp serve 1>&-` prints its banner and help nowhere, not a traceback
        sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)
