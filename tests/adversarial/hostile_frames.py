"""Hypothesis strategies for hostile WebSocket frame sequences (RFC 6455), as raw bytes.

A sequence mixes honest text frames (a JSON-RPC ping) with hostile ones: reserved opcodes, RSV bits
without an extension, unmasked client frames, text that is not UTF-8, continuation frames with no
start, fragmented or oversized control frames, close frames with invalid codes or reasons, a declared
length past the frame cap, binary frames, text that is not JSON, and floods of pings.
"""

from __future__ import annotations

import attrs
from hypothesis import strategies as st

from .hostile_bodies import hostile_bodies
from .ws_frames import BINARY, CLOSE, CONTINUATION, PING, PONG, TEXT, close_payload, frame

HONEST = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


@attrs.frozen
class Piece:
    name: str
    data: bytes


def _pieces() -> st.SearchStrategy[Piece]:
    honest = st.just(Piece("honest ping", frame(TEXT, HONEST)))
    hostile = st.one_of(
        st.integers(3, 7).map(lambda op: Piece(f"reserved data opcode {op}", frame(op, HONEST))),
        st.integers(0xB, 0xF).map(lambda op: Piece(f"reserved control opcode {op}", frame(op, b""))),
        st.integers(1, 7).map(lambda rsv: Piece(f"rsv {rsv}", frame(TEXT, HONEST, rsv=rsv))),
        st.just(Piece("unmasked", frame(TEXT, HONEST, masked=False))),
        st.binary(min_size=1, max_size=40).filter(_not_utf8).map(lambda b: Piece(f"text not UTF-8 {b[:20]!r}", frame(TEXT, b))),
        st.just(Piece("continuation with no start", frame(CONTINUATION, HONEST))),
        st.integers(2, 50).map(lambda n: Piece(f"text in {n} fragments", _fragmented(HONEST, n))),
        st.just(Piece("text fragment never finished", frame(TEXT, HONEST[:10], fin=False))),
        st.just(Piece("fragmented ping", frame(PING, b"x", fin=False))),
        st.integers(126, 4000).map(lambda n: Piece(f"ping of {n} bytes", frame(PING, b"p" * n))),
        st.sampled_from([0, 999, 1004, 1005, 1006, 1015, 2999, 5000, 65535]).map(
            lambda code: Piece(f"close {code}", frame(CLOSE, close_payload(code)))),
        st.just(Piece("close of one byte", frame(CLOSE, b"\x03"))),
        st.just(Piece("close reason not UTF-8", frame(CLOSE, close_payload(1000, b"\xff\xfe")))),
        st.sampled_from([(4 << 20) + 1, 1 << 32, (1 << 63) - 1]).map(
            lambda n: Piece(f"declared length {n}", frame(TEXT, b"x" * 64, declared_length=n))),
        st.just(Piece("binary frame", frame(BINARY, HONEST))),
        st.just(Piece("unsolicited pong", frame(PONG, b"pong"))),
        st.integers(100, 5000).map(lambda n: Piece(f"{n} pings", frame(PING, b"flood") * n)),
        hostile_bodies().map(lambda body: Piece(f"text {body[:40]!r}", frame(TEXT, body))),
    )
    return st.one_of(honest, hostile)


def _not_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _fragmented(payload: bytes, count: int) -> bytes:
    size = max(1, len(payload) // count)
    parts = [payload[i:i + size] for i in range(0, len(payload), size)]
    frames = [frame(TEXT if i == 0 else CONTINUATION, part, fin=i == len(parts) - 1) for i, part in enumerate(parts)]
    return b"".join(frames)


def frame_sequences() -> st.SearchStrategy[list[Piece]]:
    return st.lists(_pieces(), min_size=1, max_size=6)
