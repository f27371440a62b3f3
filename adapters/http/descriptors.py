"""Open-file limits: raise the soft limit to the hard one at start-up, and derive the connection cap.

Most hosts start a process with a soft RLIMIT_NOFILE of 1,024 and a hard limit far above it. Every
connection costs a descriptor, so a server left at the soft limit is locked out by about a thousand
idle sockets. Raising the soft limit needs no privilege; the hard limit is the ceiling an operator
chose. The total connection cap keeps `HEADROOM` descriptors back for what else the process opens
(the listening socket, the model files, inference threads' pipes, log files).
"""

from __future__ import annotations

import resource

import attrs

HEADROOM = 256
"""Descriptors kept free of connections: `hexmcp serve` holds 19 at rest with the model loaded."""

_UNLIMITED_CEILING = 1 << 20
"""Linux refuses an infinite RLIMIT_NOFILE (the ceiling is fs.nr_open, 1,048,576 by default)."""


@attrs.frozen(kw_only=True)
class OpenFilesLimit:
    soft_before: int
    soft: int
    hard: int
    error: str | None = None
    """Why the raise failed (the soft limit stays `soft_before`); None when it worked or was not needed."""

    @property
    def raised(self) -> bool:
        return self.soft > self.soft_before


def _as_number(limit: int) -> int:
    return _UNLIMITED_CEILING if limit == resource.RLIM_INFINITY else limit


def raise_open_files_limit() -> OpenFilesLimit:
    """Set the soft RLIMIT_NOFILE to the hard limit (capped at 2^20 when the hard one is unlimited)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = _as_number(hard)
    if soft != resource.RLIM_INFINITY and soft >= target:
        return OpenFilesLimit(soft_before=soft, soft=soft, hard=hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError) as error:  # e.g. macOS caps at OPEN_MAX below an unlimited hard limit
        return OpenFilesLimit(soft_before=soft, soft=soft, hard=hard, error=str(error))
    return OpenFilesLimit(soft_before=soft, soft=target, hard=hard)


def current_soft_limit() -> int:
    return _as_number(resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def connection_cap(soft_limit: int) -> int:
    """The default total connection cap for a process allowed `soft_limit` descriptors."""
    return max(1, _as_number(soft_limit) - HEADROOM)
