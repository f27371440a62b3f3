"""HTTP benchmark: `tools/call` of a trivial echo tool, hexmcp vs the official MCP SDK, same run, same load.

    python bench/http.py [--duration 5] [--json out.json] [--skip-classifier]

Each server runs in its own process (hexmcp: `bench/servers/hexmcp_http_echo.py`, the `hexmcp serve` app
with one echo tool; SDK: `bench/servers/sdk_http_echo.py`, stateful Streamable HTTP, json_response=True,
uvicorn at WARNING). One session is initialized, then `wrk` (a C load generator, so the client is never
the bottleneck; `apt-get install wrk`) replays the same POST with the session header at concurrency 1
and 32. Reported: req/s, p50 and p99 latency, and hexmcp/SDK ratios. With the classifier available it
also measures `classify_text` over the REST endpoint (`POST /mcp/tools/call`) at concurrency 16.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Run as a script, this file's folder heads sys.path and this module's name shadows the standard
# library's `http` package (which httpx imports); drop the folder first.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

import httpx  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SERVERS = ROOT / "bench" / "servers"
VERSION = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
ECHO_CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}
CLASSIFY_TEXT = "What is the derivative of x squared times the sine of x?"

# Every request gets its own JSON-RPC id: ids must be unique among a session's requests in flight, and a
# server may legitimately route answers by id (the SDK does; replaying one id at c=32 stalls it).
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
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('RESULT {"requests":%%d,"duration_us":%%d,"p50_us":%%d,"p99_us":%%d,"non2xx":%%d,"errors":%%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status,
    e.connect + e.read + e.write + e.timeout))
end
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(command: list[str], port: int, ready_path: str | None = None, timeout_s: float = 30) -> subprocess.Popen:
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, "HEXMCP_LOG_LEVEL": "warning"})
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


def wrk(url: str, body: dict[str, Any], headers: dict[str, str], connections: int, duration: float) -> dict[str, float]:
    header_lines = "\n".join(f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items())
    # The body around its id: `{"id": <n>, ...rest}` (REST bodies have no id and stay as they are).
    rest = json.dumps({k: v for k, v in body.items() if k != "id"})
    head, tail = ('{"id":', "," + rest[1:]) if "id" in body else (rest, "")
    script = LUA % {"head": head, "tail": tail, "numbered": "true" if "id" in body else "false",
                    "headers": header_lines}
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


def bench_echo(name: str, script: str, duration: float) -> dict[str, Any]:
    port = free_port()
    process = start([sys.executable, str(SERVERS / script), "--port", str(port)], port)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        headers = open_session(url)
        return {f"c{c}": wrk(url, ECHO_CALL, headers, c, duration) for c in (1, 32)}
    finally:
        stop(process)


def bench_classifier(duration: float) -> dict[str, Any] | None:
    port = free_port()
    try:
        process = start([sys.executable, "-m", "hexmcp.adapters.cli", "serve", "--port", str(port)], port,
                        ready_path="/health", timeout_s=180)
    except RuntimeError as error:
        print(f"classify_text benchmark skipped: {str(error).splitlines()[-1] if str(error) else error}")
        return None
    try:
        url = f"http://127.0.0.1:{port}/mcp/tools/call"
        body = {"name": "classify_text", "arguments": {"text": CLASSIFY_TEXT}}
        check = httpx.post(url, json=body, timeout=30)
        if check.status_code != 200 or check.json().get("isError"):
            print(f"classify_text benchmark skipped: {check.status_code} {check.text[:200]}")
            return None
        return {"c16": wrk(url, body, {"Content-Type": "application/json"}, 16, duration)}
    finally:
        stop(process)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per measurement")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--skip-classifier", action="store_true")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("wrk is required: apt-get install -y wrk", file=sys.stderr)
        return 2
    results: dict[str, Any] = {"hexmcp": bench_echo("hexmcp", "hexmcp_http_echo.py", args.duration),
                               "sdk": bench_echo("sdk", "sdk_http_echo.py", args.duration)}
    print(f"{'tools/call echo':<18}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}")
    for name in ("hexmcp", "sdk"):
        for level, figures in results[name].items():
            print(f"{name + ' ' + level:<18}{figures['rps']:>10.0f}{figures['p50_ms']:>10.2f}{figures['p99_ms']:>10.2f}"
                  + (f"  ({figures['non2xx']} non-2xx, {figures['errors']} errors)"
                     if figures["non2xx"] or figures["errors"] else ""))
    ratios = {level: {"rps": results["hexmcp"][level]["rps"] / results["sdk"][level]["rps"],
                      "p99_vs_sdk_p50": results["hexmcp"][level]["p99_ms"] / results["sdk"][level]["p50_ms"]}
              for level in ("c1", "c32")}
    results["ratios"] = ratios
    for level, ratio in ratios.items():
        print(f"{level}: hexmcp/SDK req/s = {ratio['rps']:.2f}x; hexmcp p99 / SDK p50 = {ratio['p99_vs_sdk_p50']:.2f}")
    if not args.skip_classifier:
        classify = bench_classifier(args.duration)
        if classify is not None:
            results["classify_text_rest"] = classify
            figures = classify["c16"]
            print(f"classify_text REST c16: {figures['rps']:.0f} req/s, p50 {figures['p50_ms']:.2f} ms, "
                  f"p99 {figures['p99_ms']:.2f} ms")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
