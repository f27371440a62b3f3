"""CoalescingTransport: one underlying write per event-loop pass, nothing lost, flow control kept."""

from __future__ import annotations

import asyncio
from typing import Any

from hexmcp.adapters.http.coalesce import FLUSH_AT, CoalescingTransport


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False

    def write(self, data: bytes) -> None:
        assert not self.closed
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default


def test_writes_in_one_pass_leave_as_one_write() -> None:
    async def main() -> FakeTransport:
        inner = FakeTransport()
        outer = CoalescingTransport(inner, asyncio.get_running_loop())  # type: ignore[arg-type]
        outer.write(b"HTTP/1.1 200 OK\r\n\r\n")
        outer.write(memoryview(b"{}"))
        assert inner.writes == [] and outer.get_write_buffer_size() == 21
        await asyncio.sleep(0)
        outer.write(b"next")
        await asyncio.sleep(0)
        assert outer.get_extra_info("peername") == ("127.0.0.1", 1)
        return inner

    assert asyncio.run(main()).writes == [b"HTTP/1.1 200 OK\r\n\r\n{}", b"next"]


def test_close_flushes_first_and_abort_drops() -> None:
    async def main() -> tuple[FakeTransport, FakeTransport]:
        loop = asyncio.get_running_loop()
        closed, aborted = FakeTransport(), FakeTransport()
        for inner in (closed, aborted):
            outer = CoalescingTransport(inner, loop)  # type: ignore[arg-type]
            outer.write(b"last words")
            assert not outer.is_closing()
            outer.close() if inner is closed else outer.abort()
            assert outer.is_closing()
        await asyncio.sleep(0)  # the scheduled flush finds nothing left to write
        return closed, aborted

    closed, aborted = asyncio.run(main())
    assert closed.writes == [b"last words"] and closed.closed
    assert aborted.writes == [] and aborted.aborted


def test_large_output_is_written_at_once() -> None:
    async def main() -> FakeTransport:
        inner = FakeTransport()
        outer = CoalescingTransport(inner, asyncio.get_running_loop())  # type: ignore[arg-type]
        outer.write(b"x" * (FLUSH_AT - 1))
        assert inner.writes == []
        outer.write(b"yz")
        assert len(inner.writes) == 1 and outer.get_write_buffer_size() == 0
        return inner

    assert b"".join(asyncio.run(main()).writes) == b"x" * (FLUSH_AT - 1) + b"yz"


def test_every_transport_written_in_a_pass_is_flushed_by_one_callback() -> None:
    """One end-of-pass callback per loop (`PassFlush`), whatever the number of transports; one whose flush
    fails is reported to the loop and the others still flush."""

    class Broken(FakeTransport):
        def write(self, data: bytes) -> None:
            raise OSError("gone")

    async def main() -> tuple[list[FakeTransport], list[dict[str, Any]], int]:
        loop = asyncio.get_running_loop()
        reported: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _loop, context: reported.append(context))
        inners = [FakeTransport(), Broken(), FakeTransport()]
        outers = [CoalescingTransport(inner, loop) for inner in inners]  # type: ignore[arg-type]
        before = len(loop._ready)  # type: ignore[attr-defined]
        for outer in outers:
            outer.write(b"head")
            outer.write(b"body")
        scheduled = len(loop._ready) - before  # type: ignore[attr-defined]
        await asyncio.sleep(0)
        return inners, reported, scheduled

    inners, reported, scheduled = asyncio.run(main())
    assert scheduled == 1
    assert inners[0].writes == [b"headbody"] and inners[2].writes == [b"headbody"]
    assert len(reported) == 1 and isinstance(reported[0]["exception"], OSError)
