"""Async HTTP clients from PyPI against aiohttp, each used as the gateway would use it, beside the raw floor.

    python -m bench.gateway_client_candidates [--calls 300] [--rounds 5] [--pause-ms 2] [--arm NAME ...]

Starts `bench/servers/fake_openai.py` (answers at once) in its own process and, on the loop hexmcp serves on
(uvloop when installed), posts the gateway's chat body to it with each client: one client per arm made
inside the loop, its pool kept between calls (one kept-alive connection to the loopback upstream), the
gateway's headers, redirects not followed, a per-request deadline where the client takes one, the answer's
status checked, its body read chunk by chunk and refused past the gateway's `max_response_bytes` (8 MiB)
as it is read, then parsed with orjson. Arms, interleaved round by round:
- `raw protocol`: the floor of `bench.gateway_own_cost` (prebuilt bytes, an asyncio Protocol, httptools);
- `aiohttp`: the session `OpenAICompatibleGateway` makes, used as `_post` uses it (awaited, capped read,
  released in `finally` if still open);
- `pyreqwest` (Rust reqwest/hyper, its own tokio runtime), `aiosonic`, `httpx`, `niquests`
  (urllib3-future), `wreq` (rnet's successor; Rust), `curl_cffi` (libcurl's multi handle on the loop).
- `pyreqwest mt`: pyreqwest on its multithreaded tokio runtime (a worker per core) rather than its default
  single-threaded one;
- `pyreqwest whole`, `wreq whole`: the same two with the body read whole in one crossing into their
  runtime; not eligible (no cap while reading), a bound on how fast each could be.
A client that is not installed is named and skipped: the candidates are not hexmcp dependencies.
Each arm's first call of a round, after the others' rounds left its connection idle past the upstream's
5 s keep-alive, is not counted; a client whose call fails there (a closed pooled connection reused) is named.
Prints each package's version, then thread CPU and wall µs per call (medians of rounds) and each arm's
difference to aiohttp, and the per-round CPU figures, so that a saving can be seen to hold in every round.
Thread CPU is this (the loop's) thread only: a client that runs its I/O on threads of its own (pyreqwest,
wreq) does part of its work where this does not count it, so its process CPU (`time.process_time`) is
printed as well, and is the figure to compare for such a client.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import statistics
import sys
import time
from datetime import timedelta
from typing import Any, AsyncIterator, Awaitable, Callable

import orjson
from aiohttp.payload import BytesPayload

from bench.gateway_own_cost import BODY, _run, raw_floor
from bench.http import free_port, start, stop
from hexmcp.core.log import configure_logging
from hexmcp.tools.gateway.outbound import GatewayConfig
from hexmcp.tools.gateway.outbound.openai_compatible import NO_CLIENT_TIMER, READ_CHUNK, OpenAICompatibleGateway

CAP = GatewayConfig(url="http://127.0.0.1").max_response_bytes
TIMEOUT_S = 60.0
HEADERS = {"accept": "application/json, text/event-stream", "user-agent": "hexmcp-gateway",
           "content-type": "application/json"}
PACKAGES = {"aiohttp": "aiohttp", "pyreqwest": "pyreqwest", "aiosonic": "aiosonic", "httpx": "httpx",
            "niquests": "niquests", "wreq": "wreq", "curl_cffi": "curl_cffi", "pyreqwest whole": "pyreqwest",
            "wreq whole": "wreq", "pyreqwest mt": "pyreqwest"}
WARM = 100

Arm = Callable[[], Awaitable[None]]
Closer = Callable[[], Awaitable[None]]


class TooLarge(Exception):
    pass


async def capped(chunks: AsyncIterator[Any]) -> bytes:
    """The body, refused as soon as it passes CAP, as `_read_limited` does."""
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > CAP:
            raise TooLarge()
        parts.append(bytes(chunk))
    return b"".join(parts)


def checked(status: int) -> None:
    if status >= 300:
        raise RuntimeError(f"HTTP {status}")


async def aiohttp_arm(chat: str) -> tuple[Arm, Closer]:
    gateway = OpenAICompatibleGateway(GatewayConfig(url=chat.removesuffix("/chat/completions")))
    session = gateway._client()
    url = gateway._chat_url

    async def call() -> None:
        payload = BytesPayload(BODY, content_type="application/json")
        response = await session.post(url, data=payload, allow_redirects=False, timeout=NO_CLIENT_TIMER)
        try:
            checked(response.status)
            read = response.content.read
            parts: list[bytes] = []
            size = 0
            while chunk := await read(READ_CHUNK):
                size += len(chunk)
                if size > CAP:
                    raise TooLarge()
                parts.append(chunk)
            orjson.loads(b"".join(parts))
        finally:
            if not response.closed:
                response.release()

    return call, gateway.aclose


def pyreqwest_client(multithreaded: bool = False) -> Any:
    from pyreqwest.client import ClientBuilder

    return (ClientBuilder().default_headers(HEADERS).follow_redirects(False).max_connections(256)
            .timeout(timedelta(seconds=TIMEOUT_S)).runtime_multithreaded(multithreaded).build())


async def pyreqwest_arm(chat: str, multithreaded: bool = False) -> tuple[Arm, Closer]:
    client = pyreqwest_client(multithreaded)

    async def call() -> None:
        async with client.post(chat).body_bytes(BODY).build_streamed() as response:
            checked(response.status)
            reader = response.body_reader
            parts: list[bytes] = []
            size = 0
            while (chunk := await reader.read_chunk()) is not None:
                size += len(chunk)
                if size > CAP:
                    raise TooLarge()
                parts.append(bytes(chunk))
            orjson.loads(b"".join(parts))

    return call, client.close


async def pyreqwest_whole_arm(chat: str) -> tuple[Arm, Closer]:
    """Not eligible (the body is read whole, with no cap while reading): how fast pyreqwest's request is
    with one crossing into its runtime for the body rather than one per chunk."""
    client = pyreqwest_client()

    async def call() -> None:
        response = await client.post(chat).body_bytes(BODY).build().send()
        checked(response.status)
        orjson.loads(bytes(await response.bytes()))

    return call, client.close


async def aiosonic_arm(chat: str) -> tuple[Arm, Closer]:
    import aiosonic
    from aiosonic.timeout import Timeouts

    client = aiosonic.HTTPClient(follow=False)
    timeouts = Timeouts(sock_connect=TIMEOUT_S, sock_read=TIMEOUT_S, request_timeout=TIMEOUT_S)

    async def call() -> None:
        response = await client.post(chat, data=BODY, headers=HEADERS, timeouts=timeouts)
        checked(response.status_code)
        orjson.loads(await capped(response.read_chunks()))

    async def close() -> None:
        await client.connector.cleanup()

    return call, close


async def httpx_arm(chat: str) -> tuple[Arm, Closer]:
    import httpx

    client = httpx.AsyncClient(headers=HEADERS, follow_redirects=False, timeout=TIMEOUT_S,
                               limits=httpx.Limits(max_connections=256))

    async def call() -> None:
        async with client.stream("POST", chat, content=BODY) as response:
            checked(response.status_code)
            orjson.loads(await capped(response.aiter_bytes()))

    return call, client.aclose


async def niquests_arm(chat: str) -> tuple[Arm, Closer]:
    import niquests

    session = niquests.AsyncSession(pool_maxsize=256)
    session.headers.update(HEADERS)

    async def call() -> None:
        response = await session.post(chat, data=BODY, stream=True, timeout=TIMEOUT_S, allow_redirects=False)
        try:
            checked(response.status_code or 0)
            orjson.loads(await capped(await response.iter_content(READ_CHUNK)))
        finally:
            await response.close()

    return call, session.close


async def wreq_arm(chat: str) -> tuple[Arm, Closer]:
    import wreq
    from wreq.redirect import Policy

    client = wreq.Client(headers=HEADERS, redirect=Policy.none(), timeout=timedelta(seconds=TIMEOUT_S))

    async def call() -> None:
        async with await client.post(chat, body=BODY) as response:
            checked(response.status.as_int())
            async with response.stream() as streamer:
                orjson.loads(await capped(streamer))

    async def close() -> None:
        pass  # the pool goes with the client

    return call, close


async def wreq_whole_arm(chat: str) -> tuple[Arm, Closer]:
    """Not eligible (the body read whole, no cap while reading): wreq's request with one body crossing."""
    import wreq
    from wreq.redirect import Policy

    client = wreq.Client(headers=HEADERS, redirect=Policy.none(), timeout=timedelta(seconds=TIMEOUT_S))

    async def call() -> None:
        async with await client.post(chat, body=BODY) as response:
            checked(response.status.as_int())
            orjson.loads(await response.bytes())

    async def close() -> None:
        pass

    return call, close


async def curl_cffi_arm(chat: str) -> tuple[Arm, Closer]:
    from curl_cffi.requests import AsyncSession

    session = AsyncSession(headers=HEADERS, allow_redirects=False, timeout=TIMEOUT_S, max_clients=256)

    async def call() -> None:
        async with session.stream("POST", chat, data=BODY) as response:
            checked(response.status_code)
            orjson.loads(await capped(response.aiter_content()))

    return call, session.close


FACTORIES: dict[str, Callable[[str], Awaitable[tuple[Arm, Closer]]]] = {
    "aiohttp": aiohttp_arm, "pyreqwest": pyreqwest_arm, "aiosonic": aiosonic_arm, "httpx": httpx_arm,
    "niquests": niquests_arm, "wreq": wreq_arm, "curl_cffi": curl_cffi_arm,
    "pyreqwest whole": pyreqwest_whole_arm, "wreq whole": wreq_whole_arm,
    "pyreqwest mt": lambda chat: pyreqwest_arm(chat, multithreaded=True)}
FLOOR = "raw protocol"


def versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name, package in PACKAGES.items():
        try:
            found[name] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


async def measure(url: str, names: list[str], calls: int, rounds: int, pause_s: float,
                  failures: dict[str, list[str]]) -> dict[str, list[tuple[float, float, float]]]:
    """Per arm, per round: (thread CPU, process CPU, wall) seconds per call. The call each arm makes after
    the others' rounds (idle longer than the upstream's 5 s keep-alive) is not counted; when it fails, its
    error is added to `failures`."""
    chat = url + "/chat/completions"
    arms: dict[str, Arm] = {}
    closers: list[Closer] = []
    # The upstream (uvicorn) closes a connection idle for 5 s, as every arm's is while the others run a
    # round: before each arm's round one untimed call, on a new connection for the floor (which has no
    # pool to notice a closed one), so that no arm pays for reconnecting in its counted calls.
    floor: list[Any] = list(await raw_floor(url))

    async def raw_protocol() -> None:
        await floor[0]()

    async def reconnect() -> None:
        floor[1]._transport.close()
        floor[:] = await raw_floor(url)

    arms[FLOOR] = raw_protocol
    try:
        for name in names:
            arm, close = await FACTORIES[name](chat)
            closers.append(close)
            arms[name] = arm
        for name, arm in arms.items():
            if name == FLOOR:
                await reconnect()
            for _ in range(WARM):
                await arm()
        samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in arms}
        for _ in range(rounds):
            for name, arm in arms.items():
                if name == FLOOR:
                    await reconnect()
                try:  # most rounds this finds the arm's pooled connection closed by the upstream meanwhile
                    await arm()
                except Exception as error:  # a client that fails here would fail a caller the same way
                    failures.setdefault(name, []).append(f"{type(error).__name__}: {error}"[:120])
                thread_s = process_s = wall_s = 0.0
                for _ in range(calls):
                    if pause_s:
                        await asyncio.sleep(pause_s)
                    thread, process, wall = time.thread_time(), time.process_time(), time.perf_counter()
                    await arm()
                    thread_s += time.thread_time() - thread
                    process_s += time.process_time() - process
                    wall_s += time.perf_counter() - wall
                samples[name].append((thread_s / calls, process_s / calls, wall_s / calls))
        return samples
    finally:
        for close in closers:
            await close()
        floor[1]._transport.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per arm and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pause-ms", type=float, default=2.0, help="idle before every call (not counted)")
    parser.add_argument("--arm", action="append", choices=sorted(FACTORIES), help="only these (aiohttp always)")
    args = parser.parse_args(argv)
    configure_logging("info")
    found = versions()
    print("versions: " + ", ".join(f"{name} {version or 'not installed'}" for name, version in found.items()
                                   if " " not in name))
    wanted = ["aiohttp"] + [name for name in (args.arm or FACTORIES) if name != "aiohttp"]
    names = [name for name in wanted if found[name] is not None]
    port = free_port()
    upstream = start([sys.executable, "-m", "bench.servers.fake_openai", "--port", str(port)], port)
    try:
        failures: dict[str, list[str]] = {}
        samples = _run(measure(f"http://127.0.0.1:{port}/v1", names, args.calls, args.rounds, args.pause_ms / 1000,
                               failures))
    finally:
        stop(upstream)
    medians = {name: tuple(statistics.median(s[i] for s in runs) * 1e6 for i in range(3))
               for name, runs in samples.items()}
    base = medians["aiohttp"]
    print(f"{'arm':<14} {'thread CPU µs':>13} {'process CPU µs':>15} {'wall µs':>9} {'Δ thread':>9} "
          f"{'Δ process':>10} {'Δ wall':>8}")
    for name, (thread, process, wall) in medians.items():
        print(f"{name:<14} {thread:>13.1f} {process:>15.1f} {wall:>9.1f} {thread - base[0]:>+9.1f} "
              f"{process - base[1]:>+10.1f} {wall - base[2]:>+8.1f}")
    print("process CPU µs per call, round by round:")
    for name, runs in samples.items():
        print(f"  {name:<14} " + " ".join(f"{s[1] * 1e6:7.1f}" for s in runs))
    for name, errors in failures.items():
        print(f"{name}: {len(errors)} of {args.rounds} calls on a connection left idle past the upstream's "
              f"keep-alive failed ({errors[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
