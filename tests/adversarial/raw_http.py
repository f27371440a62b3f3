"""A raw-socket HTTP/1.1 exchange: send any bytes, read back what the server made of them.

No client library would send the heads these tests need (a NUL in a header name, two Content-Lengths,
a 32 MiB field), so the request is bytes on a socket and the answer is parsed here, just far enough to
judge it: each response's status, headers and body, in order (pipelining), and whether the server then
closed the connection or left it hanging.
"""

from __future__ import annotations

import socket
import time

import attrs

READ_CHUNK = 65536
MAX_KEPT_BODY = 1 << 20  # an answer's body past this is not kept (the judge reads its first bytes only)


@attrs.frozen
class Response:
    status: int
    headers: dict[bytes, bytes]
    """Lower-cased names; a repeated header keeps its last value."""
    body: bytes
    raw_head: bytes

    def header(self, name: bytes) -> bytes | None:
        return self.headers.get(name.lower())


@attrs.frozen
class Exchange:
    responses: list[Response]
    closed: bool
    """The server closed (or reset) the connection; False means it was still open when we stopped reading."""
    reset: bool
    """The close was a reset rather than an orderly FIN (the server closed with our bytes unread)."""
    leftover: bytes
    """Bytes after the last whole response: a response cut short, or junk."""
    elapsed_s: float


class _Incomplete(Exception):
    pass


def _parse_one(buffer: bytes, *, eof: bool) -> tuple[Response, bytes]:
    """One response from the front of `buffer` and what follows it; _Incomplete when it is not all there."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        raise _Incomplete
    head, rest = buffer[:end], buffer[end + 4:]
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise ValueError(f"not an HTTP status line: {lines[0][:200]!r}")
    headers: dict[bytes, bytes] = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    status = int(parts[1])
    if status in (101, 204, 304) or 100 <= status < 200:
        return Response(status, headers, b"", head), rest
    if b"content-length" in headers:
        length = int(headers[b"content-length"])
        if len(rest) < length:
            raise _Incomplete
        return Response(status, headers, rest[:length], head), rest[length:]
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        body, position = bytearray(), 0
        while True:
            line_end = rest.find(b"\r\n", position)
            if line_end < 0:
                if eof:  # a stream (SSE) cut by the close: keep what came
                    return Response(status, headers, bytes(body[:MAX_KEPT_BODY]), head), b""
                raise _Incomplete
            size = int(rest[position:line_end].split(b";")[0], 16)
            chunk_start = line_end + 2
            if size == 0:
                trailer_end = rest.find(b"\r\n", chunk_start)
                if trailer_end < 0:
                    raise _Incomplete
                return Response(status, headers, bytes(body[:MAX_KEPT_BODY]), head), rest[trailer_end + 2:]
            if len(rest) < chunk_start + size + 2:
                if eof:
                    body += rest[chunk_start:chunk_start + size]
                    return Response(status, headers, bytes(body[:MAX_KEPT_BODY]), head), b""
                raise _Incomplete
            if len(body) < MAX_KEPT_BODY:
                body += rest[chunk_start:chunk_start + size]
            position = chunk_start + size + 2
    if not eof:  # delimited by the close
        raise _Incomplete
    return Response(status, headers, rest[:MAX_KEPT_BODY], head), b""


def parse_responses(buffer: bytes, *, eof: bool) -> tuple[list[Response], bytes]:
    responses: list[Response] = []
    while buffer:
        try:
            response, buffer = _parse_one(buffer, eof=eof)
        except _Incomplete:
            break
        responses.append(response)
    return responses, buffer


def exchange(port: int, data: bytes, *, expect: int = 1, timeout_s: float = 8.0, host: str = "127.0.0.1",
             chunk_size: int = 1 << 20, stream_head_is_enough: bool = False) -> Exchange:
    """Send `data`, then read until the server closes, `expect` whole responses have come, or `timeout_s`.
    `stream_head_is_enough`: an event stream (which never ends by itself) counts as whole once its head is in.

    A send the server cuts short (it answered and closed before reading a 32 MiB head) is not an error
    here: what it answered is still read and judged.
    """
    started = time.monotonic()
    received = bytearray()
    closed = reset = closed_stream = False
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        try:
            for offset in range(0, len(data), chunk_size):
                sock.sendall(data[offset:offset + chunk_size])
        except OSError:
            pass  # the server stopped reading; its answer (if any) is below
        deadline = started + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            sock.settimeout(remaining)
            try:
                chunk = sock.recv(READ_CHUNK)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = reset = True
                break
            if not chunk:
                closed = True
                break
            received += chunk
            if len(parse_responses(bytes(received), eof=False)[0]) >= expect:
                break
            head = bytes(received).partition(b"\r\n\r\n")
            if stream_head_is_enough and head[1] and b"text/event-stream" in head[0].lower():
                closed_stream = True
                break
    responses, leftover = parse_responses(bytes(received), eof=closed or closed_stream)
    return Exchange(responses, closed, reset, leftover, time.monotonic() - started)
