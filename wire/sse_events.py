"""Server-sent events from any async byte stream: the parser is httpx-sse's, fed from aiohttp.

httpx-sse keeps a complete, spec-following (WHATWG event-stream) line splitter and field decoder, but
exposes them only through `EventSource`, which needs an httpx response. hexmcp's outbound HTTP reads with
aiohttp (the MCP client and the LLM gateway), so this sans-IO module is the one fence
through which hexmcp reaches the two private classes; `tests/client/test_client_properties.py` feeds them
streams split at every byte, so a release that moves or changes them fails there, not in a user's session.
"""

from __future__ import annotations

import codecs
from typing import AsyncIterable, AsyncIterator

from httpx_sse import ServerSentEvent
from httpx_sse._decoders import SSEDecoder, SSELineDecoder


async def events(chunks: AsyncIterable[bytes]) -> AsyncIterator[ServerSentEvent]:
    """Each event the stream carries, in order; a last event without its closing blank line is dropped,
    as the event-stream rules say."""
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a character may span two chunks
    lines, fields = SSELineDecoder(), SSEDecoder()
    async for chunk in chunks:
        for line in lines.decode(text.decode(chunk)):
            event = fields.decode(line)
            if event is not None:
                yield event
