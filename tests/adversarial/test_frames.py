"""Hostile WebSocket frame sequences against the live server's /ws: a protocol violation closes the socket
cleanly with the RFC 6455 code for it; on a socket left open every honest ping is answered; nothing
crashes. After each example the server lives, over HTTP and over a new socket."""

from __future__ import annotations

import json

import pytest
from hypothesis import given

from .budget import examples
from .hostile_frames import HONEST, Piece, frame_sequences
from .live import TOKEN, LiveServer
from .ws_frames import CLOSE, PONG, TEXT, frame, open_socket, read_frames

pytestmark = pytest.mark.slow  # a live `hexmcp serve` subprocess

CLEAN_CLOSE_CODES = {1000, 1002, 1003, 1007, 1008, 1009, 1013}
"""Normal, protocol error, unacceptable data, not UTF-8, policy, too big, try again later. Not 1011: an
internal error is the server failing, not the client."""


def honest_socket_answers(live: LiveServer) -> None:
    sock, _ = open_socket(live.port, token=TOKEN)
    with sock:
        sock.sendall(frame(TEXT, HONEST))
        received = read_frames(sock, quiet_s=5.0, limit_s=10.0, until_text=1)
    texts = [json.loads(f.payload) for f in received.frames if f.opcode == TEXT]
    assert texts and texts[0].get("id") == 1 and "result" in texts[0], f"honest ping over a new socket: {received}"


@examples(50)
@given(pieces=frame_sequences())
def test_hostile_frames_get_answers_or_a_clean_close(live: LiveServer, pieces: list[Piece]) -> None:
    what = " + ".join(piece.name for piece in pieces)
    sock, _ = open_socket(live.port, token=TOKEN)
    with sock:
        for piece in pieces:
            try:
                sock.sendall(piece.data)
            except OSError:
                break  # closed on an earlier piece: what it sent back is read below
        received = read_frames(sock, quiet_s=0.5, limit_s=15.0)
    closes = [f for f in received.frames if f.opcode == CLOSE]
    for close in closes:
        assert close.close_code in CLEAN_CLOSE_CODES, f"{what}: closed with {close.close_code} {close.payload[2:]!r}"
    for text in (f for f in received.frames if f.opcode == TEXT):
        message = json.loads(text.payload)
        assert isinstance(message, dict) and ("result" in message or "error" in message), f"{what}: sent {message}"
        if "error" in message:
            assert isinstance(message["error"].get("code"), int), f"{what}: malformed error {message}"
    assert not any(f.opcode not in (TEXT, CLOSE, PONG) for f in received.frames), \
        f"{what}: unexpected opcodes {[f.opcode for f in received.frames]}"
    if closes:
        assert received.closed, f"{what}: a close frame but the TCP connection stayed open"
    elif not received.closed:
        honest = sum(piece.name == "honest ping" for piece in pieces)
        answered = sum(f.opcode == TEXT and json.loads(f.payload).get("id") == 1 for f in received.frames)
        assert answered >= honest, f"{what}: {honest} honest pings on an open socket, {answered} answered"
    live.assert_alive(what)
    honest_socket_answers(live)


@examples(3)
@given(pieces=frame_sequences().filter(lambda pieces: all(piece.name == "honest ping" for piece in pieces)))
def test_honest_frames_are_each_answered(live: LiveServer, pieces: list[Piece]) -> None:
    """The control for the property above: honest pings are answered one for one, and the socket stays open."""
    sock, _ = open_socket(live.port, token=TOKEN)
    with sock:
        sock.sendall(b"".join(piece.data for piece in pieces))
        received = read_frames(sock, quiet_s=5.0, limit_s=10.0, until_text=len(pieces))
    assert sum(f.opcode == TEXT for f in received.frames) == len(pieces) and not received.closed
