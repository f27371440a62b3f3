"""Newline-delimited framing, sans-IO: bytes in, complete lines out, with a size limit per line.

Shared by the stdio server (its stdin) and the stdio client (the server's stdout), so both ends of
the wire split lines the same way; it reads no descriptor and imports nothing from the I/O modules.
"""

from __future__ import annotations


class LineSplitter:
    """Bytes in, complete lines out; a line longer than the limit is reported once and skipped."""

    def __init__(self, max_line_bytes: int) -> None:
        if max_line_bytes <= 0:
            raise ValueError(f"the message size limit must be positive, got {max_line_bytes}")
        self._max = max_line_bytes
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, data: bytes) -> tuple[list[bytes], int]:
        """Lines completed by `data`, and how many oversize lines were dropped."""
        pieces = data.split(b"\n")  # one C call; a line that arrived whole is returned without a copy
        rest = pieces.pop()
        lines: list[bytes] = []
        oversize = 0
        for piece in pieces:
            if self._discarding:
                self._discarding = False
            elif self._buffer:  # the end of a line begun in an earlier chunk
                if len(self._buffer) + len(piece) > self._max:
                    oversize += 1
                else:
                    self._buffer += piece
                    lines.append(bytes(self._buffer))
                self._buffer.clear()
            elif len(piece) > self._max:
                oversize += 1
            else:
                lines.append(piece)
        if not self._discarding:
            if len(self._buffer) + len(rest) > self._max:
                self._discarding = True
                self._buffer.clear()
                oversize += 1
            else:
                self._buffer += rest
        return lines, oversize

    def finish(self) -> bytes | None:
        """At EOF: a last line that had no newline, if any."""
        if self._discarding or not self._buffer.strip():
            return None
        return bytes(self._buffer)
