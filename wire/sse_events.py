"""Server-sent events from any async byte stream: the parser is httpx-sse's, fed from aiohttp.

httpx-sse keeps a complete, spec-following (WHATWG event-stream) line splitter and field decoder, but
exposes them only through `EventSource`, which needs an httpx response. hexmcp's outbound HTTP reads with
aiohttp (the MCP client and the LLM gateway), so this sans-IO module is the one fence
through which hexmcp reaches the two private classes; `tests/client/test_client_properties.py` feeds them
streams split at every byte, so a release that moves or changes them fails there, not in a user's session.

What is read is bounded in raw bytes, before decoding: the decoder holds a line until its newline
comes, so a bound on decoded events would never see a line that never ends (a peer could send
gigabytes without a newline and pass any such cap).
"""

from __future__ import annotations

import codecs
from typing import AsyncIterable, AsyncIterator

from httpx_sse import ServerSentEvent
from httpx_sse._decoders import SSEDecoder, SSELineDecoder


class StreamTooLarge(ValueError):
    """The stream passed one of the byte caps `events` was given; the message names the cap."""

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"{what} is over the {limit}-byte limit")
        self.limit = limit


async def events(chunks: AsyncIterable[bytes], *, max_event_bytes: int | None = None,
                 max_total_bytes: int | None = None) -> AsyncIterator[ServerSentEvent]:
    """Each event the stream carries, in order; a last event without its closing blank line is dropped,
    as the event-stream rules say.

    `max_event_bytes` bounds the raw bytes read since the last event was complete (one event, or one
    line that never ends), `max_total_bytes` the whole stream; past either, StreamTooLarge. Counted per
    chunk, so a cap is exact to within one chunk of the transport's reads."""
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a character may span two chunks
    lines, fields = SSELineDecoder(), SSEDecoder()
    since_event = total = 0
    async for chunk in chunks:
        since_event += len(chunk)
        total += len(chunk)
        if max_total_bytes is not None and total > max_total_bytes:
            raise StreamTooLarge("the event stream", max_total_bytes)
        if max_event_bytes is not None and since_event > max_event_bytes:
            raise StreamTooLarge("an event (or a line without its end)", max_event_bytes)
        for line in lines.decode(text.decode(chunk)):
            event = fields.decode(line)
            if event is not None:
                since_event = 0
                yield event
