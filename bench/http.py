"""HTTP benchmark: `tools/call` of a trivial echo tool; hexmcp, the official MCP SDK and a raw-ASGI ceiling.

    python bench/http.py [--duration 5] [--rounds 2] [--json out.json] [--skip-classifier]
                         [--classifier-only] [--against OTHER_CHECKOUT/.venv/bin/python]

Each server runs in its own process (hexmcp: `bench/servers/hexmcp_http_echo.py`, the `hexmcp serve` app
with one echo tool; SDK: `bench/servers/sdk_http_echo.py`, stateful Streamable HTTP, json_response=True,
uvicorn at WARNING; ceiling: `bench/servers/raw_asgi_echo.py`, a bare ASGI function under the same
uvicorn, httptools + uvloop, parsing with orjson; floor: `bench/servers/core_asgi_floor.py`, that ceiling
plus hexmcp's core answering the call, no HTTP adapter: what hexmcp could reach with a free adapter;
it runs on hexmcp's own uvicorn protocol, ADR 0213). Every server runs under the same uvicorn options
(httptools, uvloop, one worker, no access log, no server header). One session each is initialized, then `wrk` (a C load
generator, so the client is never the bottleneck; `apt-get install wrk`) replays the same POST with the
session header at concurrency 1 and 32. All three stay up and the rounds interleave them, so machine noise
hits each alike. Reported per server: req/s (median of rounds), p50 (median), p99 (worst round), and the
ratios issue 14 sets targets for. With the classifier available it also measures `classify_text` over
the REST endpoint (`POST /mcp/tools/call`) at concurrency 1 and 16, interleaved the same way, twice:
with one fixed prompt (issue 14's measure) and with varied prompts (MMLU-Pro question stems taken in
turn, so a per-text cache could not flatter it), once each server is warm (bench/warm.py: its start-up
work over, its CPU idle). `--against` serves the echo tool (as "hexmcp base") and classify_text from
another checkout's interpreter too, interleaved with this one, for before/after ratios from one run.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Run as a script, this file's folder heads sys.path and this module's name shadows the standard
# library's `http` package (which httpx imports); drop the folder first, and put the checkout's root there
# instead so `bench.*` imports as it does under `python -m`.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import httpx  # noqa: E402

from bench.warm import wait_warm  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MMLU_PRO = ROOT / "bench" / "data" / "mmlu-pro" / "questions.csv"
SERVERS = ROOT / "bench" / "servers"
VERSION = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
ECHO_CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}
CLASSIFY_TEXT = "What is the derivative of x squared times the sine of x?"

# Every request gets its own JSON-RPC id: ids must be unique among a session's requests in flight, and a
# server may legitimately route answers by id (the SDK does; replaying one id at c=32 stalls it).
LUA_DONE = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('RESULT {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"non2xx":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status,
    e.connect + e.read + e.write + e.timeout))
end
"""
LUA = """
wrk.method = "POST"
%(headers)s
local head = [[%(head)s]]
local tail = [[%(tail)s]]
local numbered = %(numbered)s
local counter = 0
request = function()
  if not numbered then return wrk.format(nil, nil, nil, head) end
  counter = counter + 1
  return wrk.format(nil, nil, nil, head .. counter .. tail)
end
""" + LUA_DONE.replace("%", "%%")
# Bodies taken in turn, so no two consecutive requests carry the same text (wrk runs one thread: -t1).
LUA_ROTATING = """
wrk.method = "POST"
%(headers)s
local bodies = {%(bodies)s}
local counter = 0
request = function()
  counter = counter %% #bodies + 1
  return wrk.format(nil, nil, nil, bodies[counter])
end
""" + LUA_DONE.replace("%", "%%")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(command: list[str], port: int, ready_path: str | None = None, timeout_s: float = 30,
          env: dict[str, str] | None = None) -> subprocess.Popen:
    """`env`: variables set for this process on top of ours."""
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, "HEXMCP_LOG_LEVEL": "warning", **(env or {})})
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{command[1]} exited: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            if ready_path is None:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return process
            if httpx.get(f"http://127.0.0.1:{port}{ready_path}", timeout=1).status_code == 200:
                return process
        except (OSError, httpx.TransportError):
            pass
        time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"{command} did not become ready in {timeout_s} s")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def open_session(url: str) -> dict[str, str]:
    """Initialize one session; the headers every benchmark request then carries."""
    headers = {"content-type": "application/json", "accept": ACCEPT}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
    response = httpx.post(url, json=init, headers=headers)
    response.raise_for_status()
    headers["mcp-session-id"] = response.headers["mcp-session-id"]
    headers["mcp-protocol-version"] = VERSION
    httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers).raise_for_status()
    check = httpx.post(url, json=ECHO_CALL, headers=headers)
    assert check.status_code == 200 and check.json()["result"]["content"][0]["text"] == "hi", check.text
    return headers


def lua_script(body: dict[str, Any] | list[dict[str, Any]], headers: dict[str, str]) -> str:
    """One body (JSON-RPC ones numbered per request) or a list of bodies sent in turn."""
    header_lines = "\n".join(f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items())
    if isinstance(body, list):
        encoded = [json.dumps(b) for b in body]
        assert not any("]==]" in b for b in encoded), "a body would end its Lua long string"
        return LUA_ROTATING % {"bodies": ",".join(f"[==[{b}]==]" for b in encoded), "headers": header_lines}
    # The body around its id: `{"id": <n>, ...rest}` (REST bodies have no id and stay as they are).
    rest = json.dumps({k: v for k, v in body.items() if k != "id"})
    head, tail = ('{"id":', "," + rest[1:]) if "id" in body else (rest, "")
    return LUA % {"head": head, "tail": tail, "numbered": "true" if "id" in body else "false",
                  "headers": header_lines}


def wrk(url: str, body: dict[str, Any] | list[dict[str, Any]], headers: dict[str, str], connections: int,
        duration: float, pause_ms: int = 0) -> dict[str, float]:
    """`pause_ms`: each connection waits that long after an answer before its next request (wrk's
    `delay`), so every request meets an idle server, as a lone caller's do."""
    script = lua_script(body, headers) + (f"\ndelay = function() return {pause_ms} end\n" if pause_ms else "")
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    try:
        subprocess.run(["wrk", "-t1", "-c", str(connections), "-d", "1s", "-s", handle.name, url],
                       capture_output=True, check=True)  # warm-up
        out = subprocess.run(["wrk", "-t1", "-c", str(connections), "-d", f"{duration:g}s", "--timeout", "10s",
                              "-s", handle.name, url], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(handle.name)
    line = next(line for line in out.splitlines() if line.startswith("RESULT "))
    raw = json.loads(line[len("RESULT "):])
    return {"rps": raw["requests"] / (raw["duration_us"] / 1e6), "p50_ms": raw["p50_us"] / 1000,
            "p99_ms": raw["p99_us"] / 1000, "requests": raw["requests"], "non2xx": raw["non2xx"],
            "errors": raw["errors"]}


ECHO_SERVERS = {"hexmcp": "hexmcp_http_echo.py", "sdk": "sdk_http_echo.py", "ceiling": "raw_asgi_echo.py",
                "floor": "core_asgi_floor.py"}
LEVELS = (1, 32)
REFERENCE_TARGET_RATIO = 10.0  # issue 14: at c=32, at least 10x the SDK's req/s
CEILING_TARGET_RATIO = 0.6  # and at least 0.6 of the raw-ASGI ceiling
CLASSIFY_P99_TARGET_MS = 50.0  # issue 14: classify_text at 16 callers, p99 at or under 50 ms
CLASSIFY_SCALING_TARGET = 1.8  # and at least 1.8x the single caller's throughput
CLASSIFY_LEVELS = (1, 16)


def summarize(rounds: list[dict[str, float]]) -> dict[str, float]:
    """Median req/s and p50 over the rounds, the worst p99 (a target must hold on every run)."""
    median = statistics.median
    return {"rps": median(r["rps"] for r in rounds), "p50_ms": median(r["p50_ms"] for r in rounds),
            "p99_ms": max(r["p99_ms"] for r in rounds), "requests": sum(r["requests"] for r in rounds),
            "non2xx": sum(r["non2xx"] for r in rounds), "errors": sum(r["errors"] for r in rounds),
            "rounds": len(rounds)}


def interleave(targets: dict[str, tuple[str, dict[str, Any], dict[str, str]]], levels: tuple[int, ...],
               duration: float, rounds: int) -> dict[str, dict[str, Any]]:
    """targets: name -> (url, body, headers). Each round runs every level on every target in turn."""
    measured: dict[str, dict[int, list[dict[str, float]]]] = {name: {c: [] for c in levels} for name in targets}
    for _ in range(rounds):
        for c in levels:
            for name, (url, body, headers) in targets.items():
                measured[name][c].append(wrk(url, body, headers, c, duration))
    return {name: {f"c{c}": summarize(runs) for c, runs in by_level.items()} for name, by_level in measured.items()}


BASE = "hexmcp base"
"""With `--against`: hexmcp's echo server run by the other checkout's interpreter (its code, this script)."""


def bench_echo(duration: float, rounds: int, against: str | None = None) -> dict[str, Any]:
    processes = []
    servers = [(name, sys.executable, script) for name, script in ECHO_SERVERS.items()]
    if against:
        servers.append((BASE, against, ECHO_SERVERS["hexmcp"]))
    try:
        targets = {}
        for name, python, script in servers:
            port = free_port()
            processes.append(start([python, str(SERVERS / script), "--port", str(port)], port))
            url = f"http://127.0.0.1:{port}/mcp"
            targets[name] = (url, ECHO_CALL, open_session(url))
        return interleave(targets, LEVELS, duration, rounds)
    finally:
        for process in processes:
            stop(process)


def varied_prompts() -> list[str]:
    """The question stems of bench/data/mmlu-pro (the text before its answer options), in file order:
    each text comes round once per ~1,000 requests, so a per-text cache could not flatter the figures."""
    with MMLU_PRO.open(newline="", encoding="utf-8") as handle:
        return [row["text"].split(" Options:")[0] for row in csv.DictReader(handle)]


def start_classifier(python: str) -> tuple[subprocess.Popen, str] | None:
    """`hexmcp serve` under `python` (this checkout's, or another's for a before/after run): process, URL."""
    port = free_port()
    try:
        process = start([python, "-m", "hexmcp.app.cli", "serve", "--port", str(port)], port,
                        ready_path="/health", timeout_s=180)
    except RuntimeError as error:
        print(f"classify_text benchmark skipped: {str(error).splitlines()[-1] if str(error) else error}")
        return None
    try:
        waited = wait_warm(process.pid, f"http://127.0.0.1:{port}")
    except TimeoutError as error:
        print(f"classify_text benchmark skipped: {error}")
        stop(process)
        return None
    print(f"{python}: warm {waited:.1f} s after /health said ok")
    url = f"http://127.0.0.1:{port}/mcp/tools/call"
    check = httpx.post(url, json=classify_body(CLASSIFY_TEXT), timeout=30)
    if check.status_code != 200 or check.json().get("isError"):
        print(f"classify_text benchmark skipped: {check.status_code} {check.text[:200]}")
        stop(process)
        return None
    return process, url


def classify_body(text: str) -> dict[str, Any]:
    return {"name": "classify_text", "arguments": {"text": text}}


def bench_classifier(duration: float, rounds: int, against: str | None = None) -> dict[str, Any] | None:
    """classify_text over REST, one fixed prompt (issue 14's measure) and varied ones, at 1 and 16
    callers; with `against` (another checkout's interpreter) its server too, every run interleaved."""
    servers = {"this": sys.executable, **({"base": against} if against else {})}
    started: dict[str, tuple[subprocess.Popen, str]] = {}
    try:
        for name, python in servers.items():
            served = start_classifier(python)
            if served is None:
                return None
            started[name] = served
        prompts = {"fixed": classify_body(CLASSIFY_TEXT), "varied": [classify_body(t) for t in varied_prompts()]}
        headers = {"Content-Type": "application/json"}
        targets = {f"{name} {kind}": (url, body, headers)
                   for kind, body in prompts.items() for name, (_, url) in started.items()}
        return interleave(targets, CLASSIFY_LEVELS, duration, rounds)
    finally:
        for process, _ in started.values():
            stop(process)


def print_row(label: str, figures: dict[str, float]) -> None:
    print(f"{label:<18}{figures['rps']:>10.0f}{figures['p50_ms']:>10.2f}{figures['p99_ms']:>10.2f}"
          + (f"  ({figures['non2xx']} non-2xx, {figures['errors']} errors)"
             if figures["non2xx"] or figures["errors"] else ""))


def verdict(met: bool) -> str:
    return "meets" if met else "MISSES"


def report_echo(duration: float, rounds: int, against: str | None = None) -> dict[str, Any]:
    results: dict[str, Any] = bench_echo(duration, rounds, against)
    print(f"{'tools/call echo':<18}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}   ({rounds} interleaved rounds)")
    for name in [*ECHO_SERVERS, *([BASE] if against else [])]:
        for level, figures in results[name].items():
            print_row(f"{name} {level}", figures)
    ratios = {}
    for level in (f"c{c}" for c in LEVELS):
        hexmcp, sdk, ceiling, floor = (results[name][level] for name in ECHO_SERVERS)
        ratios[level] = {"rps_vs_sdk": hexmcp["rps"] / sdk["rps"], "rps_vs_ceiling": hexmcp["rps"] / ceiling["rps"],
                         "p99_vs_sdk_p50": hexmcp["p99_ms"] / sdk["p50_ms"], "rps_vs_floor": hexmcp["rps"] / floor["rps"],
                         "floor_vs_ceiling": floor["rps"] / ceiling["rps"]}
    results["ratios"] = ratios
    for level, ratio in ratios.items():
        print(f"{level}: hexmcp/SDK req/s = {ratio['rps_vs_sdk']:.2f}x; hexmcp/ceiling = {ratio['rps_vs_ceiling']:.3f}; "
              f"hexmcp p99 / SDK p50 = {ratio['p99_vs_sdk_p50']:.2f}; hexmcp/floor = {ratio['rps_vs_floor']:.3f}; "
              f"floor/ceiling = {ratio['floor_vs_ceiling']:.3f}")
    if against:
        for level in (f"c{c}" for c in LEVELS):
            this, base, ceiling = results["hexmcp"][level], results[BASE][level], results["ceiling"][level]
            ratios[level].update(base_vs_ceiling=base["rps"] / ceiling["rps"], rps_vs_base=this["rps"] / base["rps"])
            print(f"{level}: base/ceiling = {base['rps'] / ceiling['rps']:.3f}; this / base req/s = "
                  f"{this['rps'] / base['rps']:.3f}x, p99 {this['p99_ms'] / base['p99_ms']:.2f}x")
    c32 = ratios["c32"]
    print(f"c32 targets: >= {REFERENCE_TARGET_RATIO:g}x SDK {verdict(c32['rps_vs_sdk'] >= REFERENCE_TARGET_RATIO)}, "
          f">= {CEILING_TARGET_RATIO} of ceiling {verdict(c32['rps_vs_ceiling'] >= CEILING_TARGET_RATIO)}, "
          f"p99 < SDK p50 {verdict(c32['p99_vs_sdk_p50'] < 1)}")
    return results


def report_classifier(classify: dict[str, Any]) -> None:
    print(f"{'classify_text REST':<18}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}   (server, prompts, callers)")
    for target, by_level in classify.items():
        for level, figures in by_level.items():
            print_row(f"{target} {level}", figures)
    for target, by_level in classify.items():
        scaling = by_level["c16"]["rps"] / by_level["c1"]["rps"]
        p99 = by_level["c16"]["p99_ms"]
        print(f"{target}: c16 {scaling:.2f}x the single caller ({verdict(scaling >= CLASSIFY_SCALING_TARGET)} "
              f">= {CLASSIFY_SCALING_TARGET}x); worst-round p99 {p99:.1f} ms "
              f"({verdict(p99 <= CLASSIFY_P99_TARGET_MS)} <= {CLASSIFY_P99_TARGET_MS:g} ms)")
    for kind in ("fixed", "varied"):
        if f"base {kind}" in classify:
            this, base = classify[f"this {kind}"], classify[f"base {kind}"]
            print(f"{kind} prompts, this / base: " + "; ".join(
                f"{level} req/s {this[level]['rps'] / base[level]['rps']:.2f}x, "
                f"p50 {this[level]['p50_ms'] / base[level]['p50_ms']:.2f}x" for level in this))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds per server and level")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--skip-classifier", action="store_true")
    parser.add_argument("--classifier-only", action="store_true", help="skip the echo servers")
    parser.add_argument("--against", metavar="PYTHON",
                        help="also serve the echo tool and classify_text from another checkout's interpreter "
                             "(its venv's python), interleaved with this one, and print this / base ratios")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("wrk is required: apt-get install -y wrk", file=sys.stderr)
        return 2
    results: dict[str, Any] = {} if args.classifier_only else report_echo(args.duration, args.rounds, args.against)
    if not args.skip_classifier:
        classify = bench_classifier(args.duration, args.rounds, args.against)
        if classify is not None:
            results["classify_text_rest"] = classify
            report_classifier(classify)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
