"""EventIds: minted by the core for every error and every event worth logging.

A per-process random prefix plus a counter: unique across restarts and instances, cheap enough for
the hot path (no syscall, no uuid), and sortable within one process.
"""

from __future__ import annotations

import itertools
import secrets

_PREFIX = secrets.token_hex(3)
_counter = itertools.count(1)


def new_event_id() -> str:
    return f"ev-{_PREFIX}-{next(_counter):x}"
