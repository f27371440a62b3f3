"""How large a request head may grow, measured as it arrives (sans-IO; `uvicorn_fence` feeds it).

uvicorn sets no limit on a request head and httptools gathers each header's value across reads before
it hands the header over, so a client sending one endless header line grows the server's memory for as
long as it keeps sending (a 32 MiB header got `200 OK`). `HeadMeter` counts a head's bytes read by read
*before* they reach the parser, stopping at the blank line that ends the head, so the protocol can answer
431 once the limit is passed, holding at most the limit plus one read. The parsed head is counted again
once it is complete (`completed`): that count also covers a head that began in the middle of a read,
after a pipelined request's body, which the byte count only sees from the next read on (so such a head,
too, holds at most the limit plus the read it began in).
"""

from __future__ import annotations

from http import HTTPStatus
from itertools import chain

HEADER_LINE_OVERHEAD = 4
"""`: ` and CRLF around each header's name and value, which the parsed headers do not hold."""
REQUEST_LINE_OVERHEAD = 32
"""The method, spaces and version around the request target."""
_HEAD_ENDS = (b"\n\r\n", b"\n\n")  # the blank line after the headers, with CRLF or bare LF line ends
_TAIL = 2  # bytes of the previous read kept to find a blank line split across two reads


class HeadMeter:
    """One connection's current request head: open from the connection's first byte, closed by the parser
    when the head is complete (`ended`), opened again when the request's body is complete (`began`)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = True
        self.seen = 0
        """Bytes of the open head read so far (those of reads that began while it was open)."""
        self._tail = b""

    def fits(self, data: bytes) -> bool:
        """Count `data`, just read; False when the open head now exceeds the limit (then refuse it)."""
        if not self.open:
            return True
        if self.seen + len(data) <= self.limit:
            # The whole read fits, wherever the head ends in it: no search for its end. If it ends here,
            # the parser reports it (`ended`) before the next read, which starts the count again.
            self.seen += len(data)
            self._tail = (self._tail + data)[-_TAIL:] if len(data) < _TAIL else data[-_TAIL:]
            return True
        window = self._tail + data
        ends = [found + len(end) for end in _HEAD_ENDS if (found := window.find(end)) >= 0]
        counted = min(ends) - len(self._tail) if ends else len(data)
        if self.seen + counted > self.limit:
            return False
        self.seen += counted
        self._tail = window[-_TAIL:]
        return True

    def completed(self, target: bytes, headers: list[tuple[bytes, bytes]]) -> bool:
        """The head is complete, as the parser handed it over (its target and its headers): True, and the
        head closed (`ended`), when it is within the limit. Counted in one pass over the finished list: a
        call per header cost more than the count."""
        size = len(target) + REQUEST_LINE_OVERHEAD + HEADER_LINE_OVERHEAD * len(headers)
        if size + sum(map(len, chain.from_iterable(headers))) > self.limit:
            return False
        self.open = False
        self.seen = 0
        self._tail = b""
        return True

    def ended(self) -> None:
        self.open = False
        self.seen = 0
        self._tail = b""

    def began(self) -> None:
        self.open = True
        self.seen = 0
        self._tail = b""


def head_too_large_bytes(limit: int) -> bytes:
    """The whole 431 response (the request never reaches the app): Connection: close, a one-line body."""
    status = HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
    body = f"Request head larger than {limit} bytes\n".encode("ascii")
    head = (f"HTTP/1.1 {status.value} {status.phrase}\r\n"
            "Connection: close\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    return head.encode("ascii") + body
