"""Where hexmcp keeps what it builds once per machine: `$HEXMCP_CACHE_DIR`, default `~/.cache/hexmcp`,
and whether that directory can be trusted.

The model cache, the knowledge index and the command's compiled start-up code live under it.
A module of its own so that the command can find it before any tool module is imported.

What is read from the cache decides what runs (a converted model, compiled start-up code, the list of
packs to import), so a directory someone else controls is refused before anything is read from it: one
owned by another user, one that group or others may write (unless sticky, like /tmp, where they still
cannot replace what is ours), and one holding entries another user put there. Root's directories are
trusted: root can change anything anyway.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

CACHE_DIR_ENV = "HEXMCP_CACHE_DIR"


def default_cache_dir() -> Path:
    configured = os.environ.get(CACHE_DIR_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "hexmcp"


def untrusted_reason(cache_dir: Path) -> str | None:
    """Why `cache_dir` must not be used (one phrase), or None: it is ours, or does not exist yet (it will be
    created, and be ours)."""
    try:
        status = cache_dir.stat()
    except FileNotFoundError:
        return None
    except OSError:
        return None  # unreadable: the write test at start-up says so, with its own reason
    me = os.geteuid()
    if not _trusted_owner(status.st_uid, me):
        return f"it belongs to uid {status.st_uid}, not to this user (uid {me})"
    if status.st_mode & 0o022 and not status.st_mode & stat.S_ISVTX:
        return f"group or others may write to it (mode {stat.S_IMODE(status.st_mode):04o})"
    try:
        entries = list(os.scandir(cache_dir))
    except OSError:
        return None
    for entry in entries:
        try:
            owner = entry.stat(follow_symlinks=False).st_uid
        except OSError:
            continue
        if not _trusted_owner(owner, me):
            return f"{entry.name} in it belongs to uid {owner}, not to this user (uid {me})"
    return None


def untrusted_fix(cache_dir: Path) -> str:
    """The command that makes the directory safe (ours, but open to writers: close it) or names one of
    one's own."""
    try:
        status = cache_dir.stat()
    except OSError:
        status = None
    if status is not None and status.st_uid == os.geteuid() and status.st_mode & 0o022 \
            and not status.st_mode & stat.S_ISVTX:
        return f"chmod go-w {cache_dir}"
    if cache_dir != Path.home() / ".cache" / "hexmcp":
        return f'export {CACHE_DIR_ENV}="$HOME/.cache/hexmcp"'
    return private_dir_fix()


def private_dir_fix() -> str:
    """A fresh directory only this user can enter (mktemp -d: mode 0700, a name nobody can guess), for when
    the home directory cannot hold the cache. Never a fixed name under the shared temporary folder: anyone
    could create that first."""
    return f'export {CACHE_DIR_ENV}="$(mktemp -d)"'


def _trusted_owner(owner: int, me: int) -> bool:
    return owner == me or owner == 0
