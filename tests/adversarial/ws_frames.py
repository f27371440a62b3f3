"""Raw WebSocket frames over a plain socket: any opcode, any flag, masked or not, any declared length.

A WebSocket library refuses to send what these tests are about (a text frame that is not UTF-8, a
fragmented ping, a reserved opcode), so the handshake is written by hand and frames are packed here
(RFC 6455 §5.2). `read_frames` reads what the server sends back until it closes or goes quiet.
"""

from __future__ import annotations

import base64
import os
import socket
import struct
import time

import attrs

CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


def frame(opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0, masked: bool = True,
          declared_length: int | None = None, mask_key: bytes | None = None) -> bytes:
    """One frame. `declared_length` lies about the payload's length (the payload sent is still `payload`)."""
    length = len(payload) if declared_length is None else declared_length
    first = (0x80 if fin else 0) | ((rsv & 0x7) << 4) | (opcode & 0xF)
    mask_bit = 0x80 if masked else 0
    if length < 126:
        head = struct.pack("!BB", first, mask_bit | length)
    elif length < 1 << 16:
        head = struct.pack("!BBH", first, mask_bit | 126, length)
    else:
        head = struct.pack("!BBQ", first, mask_bit | 127, length)
    if not masked:
        return head + payload
    key = mask_key if mask_key is not None else os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def close_payload(code: int, reason: bytes = b"") -> bytes:
    return struct.pack("!H", code) + reason


@attrs.frozen
class Frame:
    opcode: int
    payload: bytes

    @property
    def close_code(self) -> int | None:
        return struct.unpack("!H", self.payload[:2])[0] if self.opcode == CLOSE and len(self.payload) >= 2 else None


@attrs.frozen
class Received:
    frames: list[Frame]
    closed: bool
    """The TCP connection ended (orderly or reset)."""


def open_socket(port: int, *, token: str | None, path: str = "/ws", subprotocol: str | None = None,
                timeout_s: float = 5.0) -> tuple[socket.socket, bytes]:
    """Connect and complete the opening handshake; (socket, the server's answer head). Asserts a 101."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
    key = base64.b64encode(os.urandom(16))
    lines = [f"GET {path} HTTP/1.1".encode(), f"Host: 127.0.0.1:{port}".encode(), b"Upgrade: websocket",
             b"Connection: Upgrade", b"Sec-WebSocket-Key: " + key, b"Sec-WebSocket-Version: 13"]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}".encode())
    if subprotocol is not None:
        lines.append(f"Sec-WebSocket-Protocol: {subprotocol}".encode())
    sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    answer, _, rest = head.partition(b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 101"), f"the handshake was refused: {head[:300]!r}"
    assert not rest, "frames before we sent any"
    return sock, answer


def _read_exact(sock: socket.socket, count: int) -> bytes:
    data = bytearray()
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("closed mid-frame")
        data += chunk
    return bytes(data)


def read_frame(sock: socket.socket) -> Frame:
    first, second = _read_exact(sock, 2)
    length = second & 0x7F
    if length == 126:
        length = struct.unpack("!H", _read_exact(sock, 2))[0]
    elif length == 127:
        length = struct.unpack("!Q", _read_exact(sock, 8))[0]
    assert not second & 0x80, "the server masked a frame (RFC 6455 §5.1 forbids it)"
    return Frame(first & 0xF, _read_exact(sock, length))


def read_frames(sock: socket.socket, *, quiet_s: float, limit_s: float, until_text: int | None = None) -> Received:
    """Frames until the server closes the TCP connection, sends nothing for `quiet_s`, `until_text` text
    frames have come, or `limit_s` has passed. A close frame is echoed, then the TCP close awaited (up to the limit)."""
    frames: list[Frame] = []
    deadline = time.monotonic() + limit_s
    saw_close = False
    while time.monotonic() < deadline:
        sock.settimeout(min(quiet_s, max(0.01, deadline - time.monotonic())) if not saw_close
                        else max(0.01, deadline - time.monotonic()))
        try:
            got = read_frame(sock)
        except socket.timeout:
            return Received(frames, closed=False)
        except (ConnectionError, OSError):
            return Received(frames, closed=True)
        frames.append(got)
        if got.opcode == CLOSE and not saw_close:
            saw_close = True
            try:  # echo it (RFC 6455 §5.5.1), so the server closes the TCP connection without waiting
                sock.sendall(frame(CLOSE, got.payload[:2]))
            except OSError:
                return Received(frames, closed=True)
        if until_text is not None and sum(f.opcode == TEXT for f in frames) >= until_text:
            return Received(frames, closed=False)
    return Received(frames, closed=False)
