"""The SSE reader's byte caps (issue 30) count raw bytes as they arrive: a line that never ends is
refused once it passes the cap, while any number of events each under it pass."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

import pytest

from hexmcp.wire.sse_events import StreamTooLarge, events


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


def read(*parts: bytes, **caps: int) -> list[str]:
    async def run() -> list[str]:
        return [event.data async for event in events(chunks(*parts), **caps)]
    return asyncio.run(run())


def test_a_line_without_its_end_is_refused_as_it_grows() -> None:
    endless = (b"data: ",) + (b"x" * 1000,) * 100  # 100 kB, no newline, never an event
    assert read(*endless) == []  # uncapped: nothing comes out, and nothing says why
    with pytest.raises(StreamTooLarge, match="over the 10000-byte limit"):
        read(*endless, max_event_bytes=10_000)


def test_many_events_each_under_the_event_cap_pass_and_the_total_cap_holds() -> None:
    stream = [b"data: " + b"y" * 900 + b"\n\n"] * 50  # 45 kB in 50 events of ~900 bytes
    assert len(read(*stream, max_event_bytes=1000)) == 50
    with pytest.raises(StreamTooLarge, match="the event stream is over the 20000-byte limit"):
        read(*stream, max_event_bytes=1000, max_total_bytes=20_000)
