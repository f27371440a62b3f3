"""aiohttp's own options and usage, one lever at a time, against the request as the gateway makes it.

    python -m bench.gateway_client_levers [--calls 500] [--rounds 7] [--pause-ms 0]
    python -m bench.gateway_client_levers --instructions [--arm NAME ...]
    python -m bench.gateway_client_levers --overlap [--calls 300] [--rounds 5] [--pause-ms 2]

Starts `bench/servers/fake_openai.py` in its own process and, on uvloop in this process, posts the
gateway's chat body to it with a bare `aiohttp.ClientSession` configured as `OpenAICompatibleGateway`
configures its own (the baseline arm uses the gateway's session itself), then with one option or usage
changed per arm: the cookie jar, the per-call timeout argument, auto-decompression, skipped auto headers,
the connector's options, the read buffer, how the body is read, the body passed as bytes, the response
used without `async with`. The raw-protocol floor of `bench.gateway_own_cost` runs beside them.
`--overlap`: instead, how much of a call could run while the prompt is still being classified: the
request begun before its body is known (aiohttp's streamed upload, the body sent chunked once known),
timed from the moment the body is known to the answer parsed, against the call as the gateway makes it
timed whole; each call after `--pause-ms` idle (default 2 here), as the loop waits on the classifier.
Printed: aiohttp's version and whether its C extensions (and multidict's, yarl's, propcache's and
frozenlist's) are the ones loaded, then per arm thread CPU and wall µs per call (medians of interleaved
rounds) and the difference to the baseline.

`--instructions`: each arm instead runs alone under `valgrind --tool=callgrind` at two call counts, and
the difference of the "Collected" totals over the difference of the counts is its instructions per
call: deterministic to ~0.2 % whatever else the machine runs, so a lever worth a microsecond shows,
where CPU time moves by ±5 µs between interleaved rounds on the shared machine. User space only: the
kernel's socket work, the same in every arm, is not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import time
from typing import Any, AsyncIterator, Awaitable, Callable

import aiohttp
import orjson
from aiohttp.payload import BytesPayload

from bench.gateway_client_cost import cost_per_call
from bench.gateway_own_cost import BODY, _run, raw_floor
from bench.http import free_port, start, stop
from hexmcp.tools.gateway.outbound import GatewayConfig
from hexmcp.tools.gateway.outbound.openai_compatible import (KEEPALIVE_S, MAX_CONNECTIONS, NO_CLIENT_TIMER, READ_CHUNK,
                                                             OpenAICompatibleGateway)

# One lever per arm: (session options, connector options, post options, how the answer is read, body as);
# a class among the session options is made inside the loop (a cookie jar needs one running).
Lever = tuple[dict[str, Any], dict[str, Any], dict[str, Any], str, str]
LEVERS: dict[str, Lever] = {
    "DummyCookieJar": ({"cookie_jar": aiohttp.DummyCookieJar}, {}, {}, "read", "payload"),
    "no timeout argument": ({}, {}, {"timeout": None}, "read", "payload"),
    "auto_decompress off": ({"auto_decompress": False}, {}, {}, "read", "payload"),
    "skip Accept-Encoding": ({}, {}, {"skip_auto_headers": ("Accept-Encoding",)}, "read", "payload"),
    "enable_cleanup_closed": ({}, {"enable_cleanup_closed": True}, {}, "read", "payload"),
    "limit_per_host 8": ({}, {"limit_per_host": 8}, {}, "read", "payload"),
    "read_bufsize 256 KiB": ({"read_bufsize": 256 * 1024}, {}, {}, "read", "payload"),
    "read(): chunk loop": ({}, {}, {}, "chunks", "payload"),
    "data: bytes": ({}, {}, {}, "read", "bytes"),
    "no async with": ({}, {}, {}, "await", "payload"),
}
BASELINE = "as the gateway"
JSON = {"content-type": "application/json"}
FLOOR = "raw protocol"
WARM = 200


def extensions() -> dict[str, bool]:
    """Whether each of aiohttp's accelerated pieces is its compiled build (a pure-Python fallback is
    taken silently when a wheel has none, or with AIOHTTP_NO_EXTENSIONS / YARL_NO_EXTENSIONS set)."""
    import frozenlist
    import multidict
    import propcache.api
    import yarl._quoting
    from aiohttp import http_parser, http_writer

    return {"aiohttp parser": http_parser.HttpResponseParser.__module__ == "aiohttp._http_parser",
            "aiohttp writer": http_writer._serialize_headers.__module__ == "aiohttp._http_writer",
            "multidict": multidict.CIMultiDict.__module__ == "multidict._multidict",
            "yarl quoting": yarl._quoting._Quoter.__module__ == "yarl._quoting_c",
            "propcache": propcache.api.under_cached_property.__module__ == "propcache._helpers_c",
            "frozenlist": frozenlist.FrozenList.__module__ == "frozenlist._frozenlist"}


async def _arms(url: str, only: list[str] | None) -> tuple[dict[str, Callable[[], Awaitable[None]]], Callable[[], Awaitable[None]]]:
    """Each arm's one call, and what closes them all."""
    gateway = OpenAICompatibleGateway(GatewayConfig(url=url))
    base = gateway._client()
    chat = gateway._chat_url
    sessions: list[aiohttp.ClientSession] = []

    def post_arm(session: aiohttp.ClientSession, post: dict[str, Any], read: str, body: str) -> Callable[[], Awaitable[None]]:
        options = {"allow_redirects": False, "timeout": NO_CLIENT_TIMER, **post}
        if options["timeout"] is None:
            del options["timeout"]

        def data() -> Any:
            return BytesPayload(BODY, content_type="application/json") if body == "payload" else BODY

        async def call() -> None:
            if read == "await":  # the response awaited, released in `finally` if still open, not by `async with`
                response = await session.post(chat, data=data(), **options)
                try:
                    orjson.loads(await response.read())
                finally:
                    if not response.closed:
                        response.release()
                return
            async with session.post(chat, data=data(), **options) as response:
                if read == "read":
                    orjson.loads(await response.read())
                    return
                chunks = []
                while chunk := await response.content.read(READ_CHUNK):
                    chunks.append(chunk)
                orjson.loads(b"".join(chunks))

        return call

    arms = {BASELINE: post_arm(base, {}, "read", "payload")}
    for name, (session_options, connector_options, post, read, body) in LEVERS.items():
        if only and name not in only:
            continue
        connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_S, **connector_options)
        made = {key: value() if isinstance(value, type) else value for key, value in session_options.items()}
        session = aiohttp.ClientSession(**{"headers": base.headers, "timeout": base.timeout,
                                           "auto_decompress": base.auto_decompress, "connector": connector, **made})
        sessions.append(session)
        arms[name] = post_arm(session, post, read, body)

    raw_protocol, raw = await raw_floor(url)
    if not only or FLOOR in only:
        arms[FLOOR] = raw_protocol

    async def close() -> None:
        await gateway.aclose()
        for session in sessions:
            await session.close()
        raw._transport.close()

    return arms, close


async def measure(url: str, calls: int, rounds: int, pause_s: float) -> dict[str, tuple[float, float]]:
    arms, close = await _arms(url, None)
    try:
        per_call = await cost_per_call(arms, calls, rounds, warm=WARM, pause_s=pause_s)
    finally:
        await close()
    return {name: (cpu * 1e6, wall * 1e6) for name, (cpu, wall) in per_call.items()}


async def overlap(url: str, calls: int, rounds: int, pause_s: float) -> dict[str, tuple[float, float]]:
    """µs of thread CPU and wall per call on the critical path: the whole call as the gateway makes it, and
    a call begun `pause_s` before its body is known, from that moment to its answer parsed."""
    gateway = OpenAICompatibleGateway(GatewayConfig(url=url))
    session, chat = gateway._client(), gateway._chat_url
    loop = asyncio.get_running_loop()

    async def whole() -> tuple[float, float]:
        await asyncio.sleep(pause_s)
        cpu, wall = time.thread_time(), time.perf_counter()
        async with session.post(chat, data=BytesPayload(BODY, content_type="application/json"),
                                allow_redirects=False, timeout=NO_CLIENT_TIMER) as response:
            orjson.loads(await response.read())
        return time.thread_time() - cpu, time.perf_counter() - wall

    async def begun_early() -> tuple[float, float]:
        body: asyncio.Future[bytes] = loop.create_future()

        async def chunks() -> AsyncIterator[bytes]:
            yield await body

        async def call() -> None:
            async with session.post(chat, data=chunks(), headers=JSON, allow_redirects=False,
                                    timeout=NO_CLIENT_TIMER) as response:
                orjson.loads(await response.read())

        task = asyncio.ensure_future(call())
        await asyncio.sleep(pause_s)  # the prompt being classified
        cpu, wall = time.thread_time(), time.perf_counter()
        body.set_result(BODY)
        await task
        return time.thread_time() - cpu, time.perf_counter() - wall

    arms = {"whole call": whole, "begun before its body": begun_early}
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in arms}
    try:
        for arm in arms.values():
            for _ in range(WARM):
                await arm()
        for _ in range(rounds):
            for name, arm in arms.items():
                spent = [await arm() for _ in range(calls)]
                samples[name].append((sum(c for c, _ in spent) / calls, sum(w for _, w in spent) / calls))
    finally:
        await gateway.aclose()
    return {name: (statistics.median(c for c, _ in runs) * 1e6, statistics.median(w for _, w in runs) * 1e6)
            for name, runs in samples.items()}


async def run_one(url: str, arm: str, calls: int) -> None:
    """`calls` calls of one arm after the warm-up: what --instructions counts."""
    arms, close = await _arms(url, [arm])
    try:
        for _ in range(WARM + calls):
            await arms[arm]()
    finally:
        await close()


def instructions(arm: str, low: int = 300, high: int = 1300) -> float:
    """Instructions per call of `arm`: two callgrind runs, the difference over the difference of counts."""
    totals = []
    for calls in (low, high):
        done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                               "-m", "bench.gateway_client_levers", "--run-one", arm, "--calls", str(calls)],
                              capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        totals.append(int(re.findall(r"Collected : (\d+)", done.stderr)[-1]))
    return (totals[1] - totals[0]) / (high - low)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500, help="calls per arm and round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--pause-ms", type=float, default=None,
                        help="idle before every call (not counted; default 0, with --overlap 2)")
    parser.add_argument("--overlap", action="store_true", help="a call begun before its body is known, instead")
    parser.add_argument("--instructions", action="store_true", help="instructions per call under callgrind instead")
    parser.add_argument("--arm", nargs="+", help="with --instructions: only these arms (default all)")
    parser.add_argument("--run-one", help=argparse.SUPPRESS)  # one arm alone, for --instructions
    args = parser.parse_args(argv)
    if args.instructions:
        print(f"aiohttp {aiohttp.__version__}; instructions per call under callgrind (user space)")
        names = args.arm or [BASELINE, *LEVERS, FLOOR]
        counts = {name: instructions(name) for name in names}
        base = counts.get(BASELINE)
        for name, count in counts.items():
            versus = f"{count - base:+10.0f} ({(count - base) / base * 100:+.2f} %)" if base else ""
            print(f"{name:<24} {count:>10.0f} {versus}")
        return 0
    port = free_port()
    upstream = start([sys.executable, "-m", "bench.servers.fake_openai", "--port", str(port)], port)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        if args.run_one:
            _run(run_one(url, args.run_one, args.calls))
            return 0
        if args.overlap:
            pause_ms = 2.0 if args.pause_ms is None else args.pause_ms
            spent = _run(overlap(url, args.calls, args.rounds, pause_ms / 1000))
            for name, (cpu, wall) in spent.items():
                print(f"{name:<24} {cpu:>8.1f} µs CPU {wall:>8.1f} µs wall on the critical path")
            saved_cpu = spent["whole call"][0] - spent["begun before its body"][0]
            saved_wall = spent["whole call"][1] - spent["begun before its body"][1]
            print(f"off the critical path when begun {pause_ms:g} ms early: {saved_cpu:.1f} µs CPU, {saved_wall:.1f} µs wall")
            return 0
        results: dict[str, tuple[float, float]] = _run(measure(url, args.calls, args.rounds, (args.pause_ms or 0) / 1000))
    finally:
        stop(upstream)
    print(f"aiohttp {aiohttp.__version__}; compiled: " + ", ".join(f"{name} {'yes' if on else 'NO'}"
                                                                  for name, on in extensions().items()))
    base_cpu, base_wall = results[BASELINE]
    print(f"{'arm':<24} {'CPU µs/call':>12} {'wall µs/call':>13} {'CPU vs base':>12} {'wall vs base':>13}")
    for name, (cpu, wall) in results.items():
        print(f"{name:<24} {cpu:>12.1f} {wall:>13.1f} {cpu - base_cpu:>+12.1f} {wall - base_wall:>+13.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
