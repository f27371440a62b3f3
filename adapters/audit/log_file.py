"""The audit file: whole lines appended with one `os.write` each on an O_APPEND descriptor, rotated by size.

Why this is safe with several writers (processes of `serve --workers N`, or a restart while the old
process drains), and what "atomic" means here: with O_APPEND the kernel moves to
the end and writes under the file's lock, so two lines never interleave; a line is cut only when the
process dies in the middle of a write that spans a page boundary, or the disk fills. Such a cut line is
left without its newline; the next writer to open the file ends it first, so the damage stays one line
the reader reports (`reader.py`), and never glues itself to the next good line.

Rotation renames `FILE` to `FILE.1` (shifting older ones up to `FILE.<backups>`) under an advisory lock
on `FILE.lock`, so two processes crossing the limit together rotate once. Every writer notices a rotation
by the path's inode changing and reopens; a line written in between lands, whole, in `FILE.1`. At least
one backup is kept: a rotation never deletes the lines it rotates away (ADR 1131).

With `fsync`, every line is on the disk when `append` returns (`os.fsync` after the write): a power loss
then costs no line already answered, at the price of a disk flush per request.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC  # RDWR: to read the last byte back at open
_MODE = 0o600  # an audit trail holds what clients sent: not for every local user


class AuditFile:
    def __init__(self, path: str | os.PathLike[str], *, max_bytes: int | None = None, backups: int = 5,
                 fsync: bool = False) -> None:
        if max_bytes is not None and max_bytes <= 0:
            raise ValueError(f"the audit log's maximum size must be positive, got {max_bytes}")
        if backups < 1:
            raise ValueError(f"at least one audit backup must be kept (a rotation without one would delete "
                             f"the trail), got {backups}")
        self.path = os.fspath(path)
        self.max_bytes = max_bytes
        self.backups = backups
        self.fsync = fsync
        self.rotations = 0
        self.short_writes = 0
        self._fd = -1
        self._inode = -1
        self._open()

    def append(self, line: bytes) -> None:
        """Append one whole line (ending in b"\\n") in one write. Raises OSError (a full disk, say)."""
        written = os.write(self._fd, line)
        if written != len(line):
            # Only a full disk or a quota does this to a regular file: end the fragment so it stays one
            # bad line, not a prefix of the next one.
            self.short_writes += 1
            os.write(self._fd, b"\n")
        if self.fsync:
            os.fsync(self._fd)
        if self.max_bytes is not None:
            self._after_write()

    def _after_write(self) -> None:
        """One stat of the path says both things a writer must know: whether another process rotated the
        file (the inode changed: reopen; the line just written landed whole in the rotated file), and
        whether it is now due for rotation."""
        try:
            status = os.stat(self.path)
        except FileNotFoundError:
            self._open()
            return
        if status.st_ino != self._inode:
            self._open()
        elif status.st_size >= (self.max_bytes or 0):
            self._rotate()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _open(self) -> None:
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, _FLAGS, _MODE)
        status = os.fstat(fd)
        if status.st_size and os.pread(fd, 1, status.st_size - 1) != b"\n":
            os.write(fd, b"\n")  # a line cut by a crash: close it off (see the module's docstring)
        self.close()
        self._fd, self._inode = fd, status.st_ino

    def _rotate(self) -> None:
        with open(self.path + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            try:
                status = os.stat(self.path)
            except FileNotFoundError:
                status = None
            # Another writer may have rotated while we waited: then the path is a new, small file.
            if status is not None and status.st_ino == self._inode and status.st_size >= (self.max_bytes or 0):
                self._shift()
                self.rotations += 1
            self._open()

    def _shift(self) -> None:
        for number in range(self.backups - 1, 0, -1):
            older = f"{self.path}.{number}"
            if os.path.exists(older):
                os.replace(older, f"{self.path}.{number + 1}")
        os.replace(self.path, f"{self.path}.1")
