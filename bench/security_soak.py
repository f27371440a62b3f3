"""Security soak: honest MCP clients keep working while hostile ones attack; their latency and the server's
memory before, during and after the attack.

    python -m bench.security_soak                   # 600 s: 20 % honest only, 60 % under attack, 20 % after
    python -m bench.security_soak --duration 120    # a short run
    python -m bench.security_soak --json            # the figures as JSON on stdout instead of the table

One `hexmcp serve` (knowledge base on, classifier off, `--auth-token`, `--rate-limit`). Honest clients,
from 127.0.0.1, all the time: the official `mcp` SDK client over Streamable HTTP (tools/list, search),
and plain httpx POSTs (JSON-RPC tools/call search in a session; the REST dialect's tools/call search),
each with a short think time between calls. Hostile clients, during the middle phase only, each from an
address of its own (127.0.0.2 and up, so per-address connection caps never count them against the honest
ones): slowloris heads, bodies at and past the size cap, a flood of requests with a wrong token, a flood
of JSON-RPC pings over one WebSocket (past the rate limit), sockets sending junk frames, raw junk heads
(ambiguous framing, a 1 MiB header, garbage), session churn (initialize, never DELETE), and replay-buffer
pinning (SSE-only POSTs whose answers echo 1 MiB, on a few sessions). Hostile traffic that carries the
token shares the honest clients' rate-limit bucket (one token, one client identity), so it is paced to
stay well under the limit together with them; the WebSocket flood spends the WebSocket bucket.

Reported: honest requests, failures (must be 0: any exception, non-2xx, JSON-RPC error or isError
result), p50/p99 per phase; hostile operations by kind and how they ended; the server's RSS (from
/proc) before, peak during and after, with after/before (target: within 10 %). Writes the figures as
JSON (--out) and appends a section to bench/diaries/security_soak.md (--diary). Exit status 1 when an
honest request failed, the server died, or RSS after is more than 10 % over before.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import datetime
import json
import random
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import httpx

from tests.adversarial.raw_http import exchange
from tests.adversarial.ws_frames import BINARY, CLOSE, PING, TEXT, close_payload, frame, open_socket, read_frames
from tests.support.slow_clients import open_slow_heads

from .http import free_port, stop
from .soak import QUERIES, process_figures, start_server

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "security-soak-token"
RSS_TARGET = 0.10
VERSION = "2025-06-18"
ACCEPT = "application/json, text/event-stream"
HONEST_THINK_S = 0.1
PHASES = ("before", "during", "after")
WARMUP = "warm-up"  # honest traffic only, not measured: the knowledge index and the first sessions settle


class HonestFailure(Exception):
    pass


class Clock:
    """The run's phases on the monotonic clock: an unmeasured warm-up, then before, during and after."""

    def __init__(self, duration_s: float, before_share: float, after_share: float, warmup_s: float) -> None:
        self.warmup_until = time.monotonic() + warmup_s
        self.start = self.warmup_until
        self.hostile_from = self.start + duration_s * before_share
        self.hostile_until = self.start + duration_s * (1 - after_share)
        self.end = self.start + duration_s

    def phase(self, at: float | None = None) -> str:
        at = time.monotonic() if at is None else at
        if at < self.warmup_until:
            return WARMUP
        return "before" if at < self.hostile_from else "during" if at < self.hostile_until else "after"

    def hostile(self) -> bool:
        return self.hostile_from <= time.monotonic() < self.hostile_until

    def running(self) -> bool:
        return time.monotonic() < self.end


class Figures:
    def __init__(self) -> None:
        self.latencies: dict[str, list[float]] = {phase: [] for phase in (WARMUP, *PHASES)}
        self.honest_by_client: collections.Counter[str] = collections.Counter()
        self.failures: list[str] = []
        self.hostile: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        self.rss: list[tuple[float, str, int]] = []  # (seconds since start, phase, KiB)

    async def honest(self, clock: Clock, client: str, call: Awaitable[None]) -> None:
        phase, started = clock.phase(), time.perf_counter()
        try:
            await call
        except Exception as error:  # every failure is a figure of the run, never a crash of it
            self.failures.append(f"{phase} {client}: {type(error).__name__}: {error}"[:300])
            return
        self.latencies[phase].append((time.perf_counter() - started) * 1000)
        self.honest_by_client[client] += 1

    def outcome(self, kind: str, how: str) -> None:
        self.hostile[kind][how] += 1


# --- honest clients ---------------------------------------------------------------------------------

def _check_rpc(answer: httpx.Response, what: str) -> dict[str, Any]:
    if answer.status_code != 200:
        raise HonestFailure(f"{what}: {answer.status_code} {answer.text[:200]}")
    message = answer.json()
    if "error" in message or message.get("result", {}).get("isError"):
        raise HonestFailure(f"{what}: {str(message)[:200]}")
    return message["result"]


async def sdk_client(base: str, clock: Clock, figures: Figures, rng: random.Random) -> None:
    """The official SDK's client over Streamable HTTP, one session for the whole run."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def list_tools(session: Any) -> None:
        if not (await session.list_tools()).tools:
            raise HonestFailure("sdk tools/list: no tools")

    async def search(session: Any) -> None:
        result = await session.call_tool("search", {"query": rng.choice(QUERIES)})
        if result.is_error:
            raise HonestFailure(f"sdk search: {result.content[:1]}")

    async with create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with streamable_http_client(f"{base}/mcp", http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                while clock.running():
                    await figures.honest(clock, "sdk", rng.choice([list_tools, search, search])(session))
                    await asyncio.sleep(HONEST_THINK_S)


async def httpx_rpc_client(base: str, clock: Clock, figures: Figures, rng: random.Random) -> None:
    """Plain JSON-RPC POSTs of tools/call search in a session of its own."""
    headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json", "accept": ACCEPT}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as http:
        init = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "soak-httpx", "version": "1"}}})
        session = {"mcp-session-id": init.headers["mcp-session-id"], "mcp-protocol-version": VERSION}
        await http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        request_id = 0

        async def search() -> None:
            nonlocal request_id
            request_id += 1
            answer = await http.post("/mcp", headers=session, json={
                "jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                "params": {"name": "search", "arguments": {"query": rng.choice(QUERIES)}}})
            _check_rpc(answer, "httpx tools/call search")

        while clock.running():
            await figures.honest(clock, "httpx-rpc", search())
            await asyncio.sleep(HONEST_THINK_S)


async def rest_client(base: str, clock: Clock, figures: Figures, rng: random.Random) -> None:
    """The REST dialect: POST /mcp/tools/call with the tool's name and arguments."""
    headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as http:
        async def search() -> None:
            answer = await http.post("/mcp/tools/call", json={"name": "search",
                                                               "arguments": {"query": rng.choice(QUERIES)}})
            if answer.status_code != 200 or answer.json().get("isError"):
                raise HonestFailure(f"rest tools/call search: {answer.status_code} {answer.text[:200]}")

        while clock.running():
            await figures.honest(clock, "rest", search())
            await asyncio.sleep(HONEST_THINK_S)


# --- hostile clients --------------------------------------------------------------------------------

Hostile = Callable[[int, str, Clock, Figures], Awaitable[None]]


def _client(port: int, address: str, *, token: str | None = TOKEN, timeout_s: float = 30) -> httpx.AsyncClient:
    """An httpx client to the server from `address` (a loopback alias of the hostile client's own)."""
    headers = {"content-type": "application/json", "accept": ACCEPT}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=timeout_s,
                             transport=httpx.AsyncHTTPTransport(local_address=address))


async def _wait_for_attack(clock: Clock) -> None:
    await asyncio.sleep(max(0.0, clock.hostile_from - time.monotonic()))


async def slowloris(port: int, address: str, clock: Clock, figures: Figures) -> None:
    await _wait_for_attack(clock)
    while clock.hostile():
        async with open_slow_heads("127.0.0.1", port, 150, local_host=address) as heads:
            with contextlib.suppress(TimeoutError):
                await heads.until_all_closed(timeout_s=max(0.1, clock.hostile_until - time.monotonic()))
            for head in heads.heads:
                figures.outcome("slowloris", "refused at a cap" if head.answer.startswith(b"HTTP/1.1 503")
                                else "closed by the head deadline" if head.closed_at else "open at the end")


async def _post_loop(kind: str, address: str, clock: Clock, figures: Figures, every_s: float,
                     make: Callable[[httpx.AsyncClient], Awaitable[httpx.Response]], *, token: str | None = TOKEN,
                     port: int) -> None:
    await _wait_for_attack(clock)
    async with _client(port, address, token=token) as http:
        while clock.hostile():
            try:
                answer = await make(http)
                figures.outcome(kind, str(answer.status_code))
            except httpx.HTTPError as error:
                figures.outcome(kind, type(error).__name__)
            await asyncio.sleep(every_s)


async def big_bodies(port: int, address: str, clock: Clock, figures: Figures) -> None:
    sizes = [int(3.9 * 2**20), 6 * 2**20]  # just under the 4 MiB cap, and past it (413)

    async def post(http: httpx.AsyncClient) -> httpx.Response:
        size = random.choice(sizes)
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":"' + b"x" * size + b'"}}}'
        return await http.post("/mcp", content=body)

    await _post_loop("big bodies", address, clock, figures, 0.5, post, port=port)


async def wrong_token_flood(port: int, address: str, clock: Clock, figures: Figures) -> None:
    async def post(http: httpx.AsyncClient) -> httpx.Response:
        return await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})

    await _post_loop("wrong-token flood", address, clock, figures, 0.01, post, token="not-the-token", port=port)


async def session_churn(port: int, address: str, clock: Clock, figures: Figures) -> None:
    async def initialize(http: httpx.AsyncClient) -> httpx.Response:
        return await http.post("/mcp", json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "churn", "version": "1"}}})

    await _post_loop("session churn", address, clock, figures, 0.1, initialize, port=port)


async def replay_pinning(port: int, address: str, clock: Clock, figures: Figures, sessions: int = 4) -> None:
    """SSE-only POSTs whose error echoes a 1 MiB tool name (twice): each answer lands in a replay buffer."""
    await _wait_for_attack(clock)
    async with _client(port, address) as http:
        ids = []
        for _ in range(sessions):
            init = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "pin", "version": "1"}}})
            if "mcp-session-id" not in init.headers:
                figures.outcome("replay pinning", f"initialize {init.status_code}")
                continue
            ids.append(init.headers["mcp-session-id"])
            await http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                            headers={"mcp-session-id": ids[-1], "mcp-protocol-version": VERSION})
        name = "p" * 2**20
        turn = 0
        while clock.hostile() and ids:
            turn += 1
            try:
                answer = await http.post("/mcp", headers={"mcp-session-id": ids[turn % len(ids)], "accept": "text/event-stream",
                                                          "mcp-protocol-version": VERSION},
                                         json={"jsonrpc": "2.0", "id": turn, "method": "tools/call",
                                               "params": {"name": name, "arguments": {}}})
                figures.outcome("replay pinning", f"{answer.status_code} ({len(answer.content) >> 20} MiB answer)")
            except httpx.HTTPError as error:
                figures.outcome("replay pinning", type(error).__name__)
            await asyncio.sleep(1.0)


async def websocket_flood(port: int, address: str, clock: Clock, figures: Figures) -> None:
    """JSON-RPC pings over one socket, 50 in flight at a time, past the rate limit."""
    import websockets

    await _wait_for_attack(clock)
    try:
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws", additional_headers={"Authorization": f"Bearer {TOKEN}"},
                                      local_addr=(address, 0), max_size=2**22) as ws:
            request_id = 0
            while clock.hostile():
                for _ in range(50):
                    request_id += 1
                    await ws.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}))
                for _ in range(50):
                    message = json.loads(await ws.recv())
                    figures.outcome("websocket flood", f"error {message['error']['code']}" if "error" in message else "answered")
                await asyncio.sleep(0.1)
    except Exception as error:  # the server may close the socket: that is an outcome, not a crash of the run
        figures.outcome("websocket flood", f"ended: {type(error).__name__}")


JUNK_FRAMES = [frame(3, b"x"), frame(TEXT, b"\xff\xfe"), frame(TEXT, b"{}", masked=False), frame(PING, b"x", fin=False),
               frame(TEXT, b"x" * 64, declared_length=1 << 40), frame(CLOSE, close_payload(999)), frame(BINARY, b"{}"),
               frame(TEXT, b"[" * 50_000), frame(PING, b"f") * 2000, frame(TEXT, b"{}", rsv=4)]


def _junk_socket(port: int, junk: bytes) -> str:
    try:
        sock, _ = open_socket(port, token=TOKEN)
    except (AssertionError, OSError) as error:
        return f"handshake: {type(error).__name__}"
    with sock:
        with contextlib.suppress(OSError):
            sock.sendall(junk)
        received = read_frames(sock, quiet_s=0.5, limit_s=5)
    codes = [f.close_code for f in received.frames if f.opcode == CLOSE]
    return f"closed {codes[0]}" if codes else "answered" if received.frames else "silent"


JUNK_HEADS = [b"GARBAGE\r\n\r\n",
              b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
              b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 2**20 + b"\r\n\r\n",
              b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n",
              b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode()
              + b"\r\nAccept: text/event-stream\r\nMcp-Session-Id: \xff\xfe\r\nLast-Event-ID: 1_\xb2\r\n\r\n"]


def _junk_head(port: int, junk: bytes) -> str:
    result = exchange(port, junk, timeout_s=10)
    return ",".join(str(r.status) for r in result.responses) or ("closed" if result.closed else "silent")


async def junk_frames_and_heads(port: int, address: str, clock: Clock, figures: Figures) -> None:
    await _wait_for_attack(clock)
    rng = random.Random(7)
    while clock.hostile():
        figures.outcome("junk frames", await asyncio.to_thread(_junk_socket, port, rng.choice(JUNK_FRAMES)))
        figures.outcome("junk heads", await asyncio.to_thread(_junk_head, port, rng.choice(JUNK_HEADS)))
        await asyncio.sleep(0.3)


HOSTILE: dict[str, Hostile] = {"slowloris": slowloris, "big bodies": big_bodies, "wrong-token flood": wrong_token_flood,
                               "session churn": session_churn, "replay pinning": replay_pinning,
                               "websocket flood": websocket_flood, "junk frames and heads": junk_frames_and_heads}


# --- the run --------------------------------------------------------------------------------------

async def sample_rss(pid: int, clock: Clock, figures: Figures, every_s: float) -> None:
    while clock.running():
        measured = process_figures(pid)
        if measured is None:
            figures.failures.append(f"{clock.phase()}: the server process is gone")
            return
        figures.rss.append((round(time.monotonic() - clock.start, 1), clock.phase(), measured[0]))
        await asyncio.sleep(every_s)


async def soak(args: argparse.Namespace, base: str, port: int, pid: int) -> dict[str, Any]:
    figures = Figures()
    clock = Clock(args.duration, args.before_share, args.after_share, args.warmup)
    rng = random.Random(args.seed)
    honest = [sdk_client(base, clock, figures, random.Random(rng.random())) for _ in range(args.sdk_clients)]
    honest += [httpx_rpc_client(base, clock, figures, random.Random(rng.random())) for _ in range(args.httpx_clients)]
    honest += [rest_client(base, clock, figures, random.Random(rng.random())) for _ in range(args.rest_clients)]
    hostile = [attack(port, f"127.0.0.{2 + index}", clock, figures) for index, attack in enumerate(HOSTILE.values())]
    results = await asyncio.gather(sample_rss(pid, clock, figures, args.sample_every), *honest, *hostile,
                                   return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):  # a client that could not even start is a failure of the run
            figures.failures.append(f"a client stopped: {type(result).__name__}: {result}"[:300])
    return summarise(args, figures, clock)


def _percentile(values: list[float], q: int) -> float | None:
    if len(values) < 2:
        return round(values[0], 2) if values else None
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 2)


def summarise(args: argparse.Namespace, figures: Figures, clock: Clock) -> dict[str, Any]:
    by_phase = {phase: [kib for _, p, kib in figures.rss if p == phase] for phase in PHASES}
    before = statistics.median(by_phase["before"][len(by_phase["before"]) // 2:]) if by_phase["before"] else None
    after = statistics.median(by_phase["after"][-3:]) if by_phase["after"] else None
    peak = max(by_phase["during"], default=None)
    return {
        "when": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "duration_s": args.duration, "warmup_s": args.warmup,
        "phases_s": {"before": round(clock.hostile_from - clock.start, 1),
                     "during": round(clock.hostile_until - clock.hostile_from, 1),
                     "after": round(clock.end - clock.hostile_until, 1)},
        "server_flags": args.server_flags,
        "honest": {"requests": sum(len(figures.latencies[phase]) for phase in PHASES) + len(figures.failures),
                   "failures": len(figures.failures), "failure_examples": figures.failures[:10],
                   "by_client": dict(figures.honest_by_client),
                   "warmup_requests": len(figures.latencies[WARMUP]),
                   "latency_ms": {phase: {"count": len(figures.latencies[phase]),
                                          "p50": _percentile(figures.latencies[phase], 50),
                                          "p99": _percentile(figures.latencies[phase], 99)} for phase in PHASES}},
        "hostile": {kind: dict(outcomes) for kind, outcomes in figures.hostile.items()},
        "rss_mib": {"before": round(before / 1024, 1) if before else None,
                    "peak_during": round(peak / 1024, 1) if peak else None,
                    "after": round(after / 1024, 1) if after else None,
                    "after_over_before": round(after / before, 3) if before and after else None,
                    "series": [(t, p, round(kib / 1024, 1)) for t, p, kib in figures.rss]},
    }


def _commit() -> str:
    """The commit the server ran from (with `+` when the work tree has changes), for the diary."""
    import subprocess

    def git(*argv: str) -> str:
        return subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    return (git("rev-parse", "--short", "HEAD") or "unknown") + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")


def table(figures: dict[str, Any]) -> str:
    honest, rss = figures["honest"], figures["rss_mib"]
    lines = [f"security soak, {figures['when']}, commit {figures.get('commit', 'unknown')}: {figures['duration_s']:g} s "
             f"({figures['phases_s']['before']:g} s honest only, {figures['phases_s']['during']:g} s under attack, "
             f"{figures['phases_s']['after']:g} s after; {figures['warmup_s']:g} s warm-up not counted)",
             f"server: hexmcp serve {' '.join(figures['server_flags'])}", "",
             f"honest requests: {honest['requests']}, failures: {honest['failures']} "
             f"({', '.join(f'{k} {v}' for k, v in honest['by_client'].items())})", "",
             "| phase | honest requests | p50 ms | p99 ms |", "|---|---:|---:|---:|"]
    lines += [f"| {phase} | {m['count']} | {m['p50']} | {m['p99']} |" for phase, m in honest["latency_ms"].items()]
    lines += ["", f"server RSS: before {rss['before']} MiB, peak during {rss['peak_during']} MiB, after {rss['after']} MiB, "
                  f"after/before {rss['after_over_before']} (target <= {1 + RSS_TARGET:.2f})", "",
              "| hostile client | outcomes |", "|---|---|"]
    lines += [f"| {kind} | {', '.join(f'{how}: {n}' for how, n in sorted(outcomes.items()))} |"
              for kind, outcomes in figures["hostile"].items()]
    lines += [f"- failure: {example}" for example in honest["failure_examples"]]
    return "\n".join(lines)


def write_diary(path: Path, figures: dict[str, Any], note: str) -> None:
    if not path.exists():
        path.write_text("# Security soak diary (issue 30)\n\nEach section is one run of `python -m bench.security_soak`: "
                        "honest clients' latency and failures, and the server's RSS, before, during and after hostile "
                        "traffic. See the module's docstring for the clients.\n")
    with path.open("a") as diary:
        diary.write(f"\n## {figures['when']}, {figures['duration_s']:g} s{': ' + note if note else ''}\n\n"
                    f"{table(figures)}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.security_soak", description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=600.0, help="seconds in all (default 600)")
    parser.add_argument("--warmup", type=float, default=20.0, help="seconds of honest traffic before the "
                        "measured run, not counted (default 20)")
    parser.add_argument("--before-share", type=float, default=0.2, help="share of the run before the attack")
    parser.add_argument("--after-share", type=float, default=0.2, help="share of the run after it")
    parser.add_argument("--sdk-clients", type=int, default=1)
    parser.add_argument("--httpx-clients", type=int, default=1)
    parser.add_argument("--rest-clients", type=int, default=1)
    parser.add_argument("--rate-limit", default="100/s", help="the server's --rate-limit (default 100/s, burst 2x)")
    parser.add_argument("--sample-every", type=float, default=2.0, help="seconds between RSS samples")
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--out", type=Path, default=ROOT / ".bench-results" / "security_soak.json")
    parser.add_argument("--diary", type=Path, default=ROOT / "bench" / "diaries" / "security_soak.md")
    parser.add_argument("--no-diary", action="store_true", help="do not append to the diary")
    parser.add_argument("--note", default="", help="a few words for the diary's section title")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of the table")
    args = parser.parse_args(argv)
    burst = str(max(1, int(float(args.rate_limit.split("/")[0]) * 2)))
    args.server_flags = ["--no-classifier", "--auth-token", TOKEN, "--rate-limit", args.rate_limit, "--rate-burst", burst]
    _check_loopback_aliases()
    port = free_port()
    args.out.parent.mkdir(exist_ok=True)
    server = start_server(args.server_flags, port, args.out.parent / "security-soak-serve.log")
    try:
        figures = asyncio.run(soak(args, f"http://127.0.0.1:{port}", port, server.pid))
        alive = server.poll() is None
    finally:
        stop(server)
    if not alive:
        figures["honest"]["failure_examples"].append("the server was not running at the end")
    args.out.write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2) if args.json else table(figures))
    if not args.no_diary:
        write_diary(args.diary, figures, args.note)
    ratio = figures["rss_mib"]["after_over_before"]
    return 1 if figures["honest"]["failures"] or not alive or ratio is None or ratio > 1 + RSS_TARGET else 0


def _check_loopback_aliases() -> None:
    """Hostile clients come from 127.0.0.2 and up; Linux answers the whole 127/8, other systems may not."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.2", 0))
        except OSError as error:
            raise SystemExit(f"cannot bind 127.0.0.2 ({error}): the hostile clients need loopback aliases") from None


if __name__ == "__main__":
    sys.exit(main())
