"""Floors under any MCP client over HTTP: one bare echo `tools/call` POST per call on an open session,
nothing parsed and nothing correlated, with three HTTP stacks.

- `httpx`: what the official SDK client (and hexmcp.client until ADR 0802) sits on.
- `aiohttp`: what hexmcp.client sits on now.
- `socket`: a keep-alive TCP socket writing the same request bytes and reading the answer by its
  content-length: no HTTP library at all, the most any client could reach against this server.
  Bench-only: it understands exactly the one answer shape this echo server sends.

Each is an async context manager yielding `call(text) -> awaitable`, as bench/client.py's clients are.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, AsyncIterator

from bench.http import open_session


def _echo(text: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"text": text}}}).encode()


@contextlib.asynccontextmanager
async def bare_httpx(url: str) -> AsyncIterator[Any]:
    import httpx

    headers = await asyncio.to_thread(open_session, url)
    async with httpx.AsyncClient() as http:
        async def call(text: str) -> bytes:
            return (await http.post(url, content=_echo(text), headers=headers)).content

        yield call


@contextlib.asynccontextmanager
async def bare_aiohttp(url: str) -> AsyncIterator[Any]:
    import aiohttp

    from hexmcp.client.transports.aio import KEEPALIVE_S

    headers = await asyncio.to_thread(open_session, url)
    # Idle connections dropped before the server drops them, as hexmcp.client does (see KEEPALIVE_S).
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(keepalive_timeout=KEEPALIVE_S)) as http:
        async def call(text: str) -> bytes:
            async with http.post(url, data=_echo(text), headers=headers) as response:
                return await response.read()

        yield call


@contextlib.asynccontextmanager
async def bare_socket(url: str) -> AsyncIterator[Any]:
    """Keep-alive sockets, one per caller in flight; one the server closed while idle is replaced
    (the check every pooling HTTP client makes before reusing a connection)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    headers = await asyncio.to_thread(open_session, url)
    head = f"POST {parts.path} HTTP/1.1\r\nhost: {parts.netloc}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    opened: list[asyncio.StreamWriter] = []

    async def connection() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        while idle:
            reader, writer = idle.pop()
            if not reader.at_eof():
                return reader, writer
            writer.close()
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        opened.append(writer)
        return reader, writer

    async def call(text: str) -> bytes:
        body = _echo(text)
        reader, writer = await connection()
        writer.write(f"{head}content-length: {len(body)}\r\n\r\n".encode() + body)
        answer_head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":", 1)[1]) for line in answer_head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        answer = await reader.readexactly(length)
        idle.append((reader, writer))
        return answer

    try:
        yield call
    finally:
        for writer in opened:
            writer.close()


FLOORS = {"httpx": bare_httpx, "aiohttp": bare_aiohttp, "socket": bare_socket}
