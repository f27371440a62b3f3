"""Deadlines for the property suite: no request waits longer than REQUEST_S for its answer, no property runs
longer than PROPERTY_S, and a server that passes either fails the property at once with one clear line
instead of stalling the suite.

Why a `BaseException`: hypothesis takes an `Exception` (and pytest's `Failed`, which pytest-timeout
raises) as a failing example and then shrinks and replays it, and every replay against a hung server
waits out its timeouts again; that turned one hung server into a suite that did not finish in 10 minutes.
`ServerHung` is not caught by hypothesis: the property fails on the first hang, carrying the last
messages of the exchange (hypothesis does not print its notes for it). The target is then marked hung
(conftest.py), and every later property on it fails at once, naming the first hang.

`HEXMCP_CONFORMANCE_REQUEST_DEADLINE` and `HEXMCP_CONFORMANCE_PROPERTY_DEADLINE` (seconds) change them;
the property deadline stays below pytest's own timeout (pyproject.toml) so it is this clear line, not
pytest-timeout's, that ends a property.
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Any, Sequence

REQUEST_S = float(os.environ.get("HEXMCP_CONFORMANCE_REQUEST_DEADLINE", "10"))
PROPERTY_S = float(os.environ.get("HEXMCP_CONFORMANCE_PROPERTY_DEADLINE", "240"))
_LAST_MESSAGES = 6


class ServerHung(BaseException):
    """The server did not answer, read or finish in time; see the module docstring for why BaseException."""


class _PropertyClock:
    def __init__(self) -> None:
        self.name = ""
        self.ends_at = math.inf

    def start(self, name: str, seconds: float = PROPERTY_S) -> None:
        self.name, self.ends_at = name, time.monotonic() + seconds

    def stop(self) -> None:
        self.name, self.ends_at = "", math.inf

    def left(self) -> float:
        return self.ends_at - time.monotonic()


PROPERTY = _PropertyClock()


def bounded(timeout: float, log: Sequence[tuple[str, Any]] = ()) -> float:
    """`timeout` cut to what is left of the running property's deadline; ServerHung once none is left."""
    left = PROPERTY.left()
    if left <= 0:
        raise ServerHung(f"the property ran past its {PROPERTY_S:g} s deadline ({PROPERTY.name}): the server "
                         f"answers too slowly to be tested{transcript_tail(log)}")
    return min(timeout, left)


def hung(what: str, log: Sequence[tuple[str, Any]] = ()) -> ServerHung:
    """The error for a wait that ran out: `what` says what did not happen and within how long."""
    return ServerHung(f"{what}: the server hangs; the property fails here instead of waiting{transcript_tail(log)}")


def transcript_tail(log: Sequence[tuple[str, Any]]) -> str:
    if not log:
        return ""
    lines = [f"  {direction} {_text(message)[:300]}" for direction, message in list(log)[-_LAST_MESSAGES:]]
    return "\nlast messages:\n" + "\n".join(lines)


def _text(message: Any) -> str:
    if isinstance(message, str):
        return message
    try:
        return json.dumps(message)  # as sent: replayable by hand
    except (TypeError, ValueError):
        return repr(message)
