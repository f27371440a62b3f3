"""Hostile-client probes against real servers on all three transports, each with the answer it must get.

    python -m bench.hostile_probes                 # every group
    python -m bench.hostile_probes --only stdio    # one group: stdio, http, ws, upstream, startup
    python -m bench.hostile_probes --json out.json # the table as JSON too

Starts `hexmcp stdio` and `hexmcp serve` (classifier off, a one-document knowledge base in a temporary
folder) as subprocesses, and for each probe sends the hostile bytes, reads what comes back and checks it
against the expected answer: the JSON-RPC error code (-32700 parse, -32600 invalid request, -32601
method, -32602 params), the HTTP status, the WebSocket close code, or the exit status and stderr of a
start that must fail. After every group an honest request must still be answered, and the server's RSS
is printed before and after. Prints one row a probe (PASS / FAIL and what came back) and exits 1 when a
probe failed. Not a benchmark: nothing is timed but the deadlines a probe waits for.

The defects these probes found, and their regression tests, are listed in bench/diaries/hostile_probes.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import json
import os
import select
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx

from tests.support.net import free_port

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "hexmcp.app.cli"]
LIGHT = ["--no-classifier"]
VERSION = "2025-06-18"
BATCH_VERSION = "2025-03-26"
ACCEPT = "application/json, text/event-stream"
ECHO_BOUND = 8 * 1024  # an error answer to a multi-megabyte argument must stay this small (core/echo.py)
ROWS: list[dict[str, Any]] = []


def record(group: str, probe: str, ok: bool, got: Any) -> None:
    text = got if isinstance(got, str) else json.dumps(got, default=repr)
    text = text.replace("\r", " ").replace("\n", " ")
    ROWS.append({"group": group, "probe": probe, "ok": ok, "got": text[:160]})
    print(f"{'PASS' if ok else 'FAIL'}  {group:<8} {probe:<46} {text[:110]}", flush=True)


def rss_mb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
    return -1


def error_code(message: Any) -> int | None:
    if isinstance(message, dict) and isinstance(message.get("error"), dict):
        return message["error"].get("code")
    return None


def init_message(version: str = VERSION, request_id: Any = "init") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "hostile-probes", "version": "1"}}}


def docs_folder(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Title\n\nSome text about kubernetes pods.\n", encoding="utf-8")
    (root / "secret.md").write_text("outside the corpus\n", encoding="utf-8")
    return docs


# --- the probes every JSON-RPC transport gets -------------------------------------------------------

DEEP = b"[" * 100_000 + b"]" * 100_000


def message_probes() -> list[tuple[str, bytes, Callable[[Any], bool]]]:
    """(name, one message's bytes, check of the answer) for any transport that carries JSON-RPC lines."""

    def code(expected: int) -> Callable[[Any], bool]:
        return lambda answer: error_code(answer) == expected

    def result(answer: Any) -> bool:
        return isinstance(answer, dict) and "result" in answer

    def refused_id(answer: Any) -> bool:
        return error_code(answer) == -32600 and answer.get("id", "absent") is None and "out of range" in json.dumps(answer)

    def small_invalid_params(answer: Any) -> bool:
        return error_code(answer) == -32602 and len(json.dumps(answer)) < ECHO_BOUND

    huge_id = json.dumps({"jsonrpc": "2.0", "id": "h1", "method": "tools/call",
                          "params": {"name": "fetch", "arguments": {"id": "\u0001" * 500_000}}}).encode()
    huge_array = json.dumps({"jsonrpc": "2.0", "id": "h2", "method": "tools/call",
                             "params": {"name": "search", "arguments": {"query": ["a"] * 300_000}}}).encode()
    return [
        ("malformed JSON", b"{bad", code(-32700)),
        ("nesting 100k deep", DEEP, code(-32700)),
        ("nesting 100k deep inside params", b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":' + DEEP + b"}}",
         code(-32700)),
        # Valid JSON with a number past a double's range: the id (or the param) is refused, not the JSON.
        ("id: 1e999", b'{"jsonrpc":"2.0","id":1e999,"method":"ping"}', refused_id),
        ("id: a 5,000-digit integer", b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}', refused_id),
        ("params: a 5,000-digit integer", b'{"jsonrpc":"2.0","id":"n1","method":"tools/call","params":{"name":"search",'
                                          b'"arguments":{"query":"x","limit":' + b"9" * 5000 + b'}}}',
         lambda answer: error_code(answer) == -32602 and answer.get("id") == "n1"
         and "$.params.arguments.limit" in json.dumps(answer)),
        ("NaN", b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}', code(-32700)),
        ("invalid UTF-8", b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"\xff\xfe"}}', code(-32700)),
        ("lone surrogate", b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', code(-32700)),
        ("UTF-8 BOM", b'\xef\xbb\xbf{"jsonrpc":"2.0","id":3,"method":"ping"}', code(-32700)),
        ("a scalar", b"42", code(-32600)),
        ("id: object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', code(-32600)),
        ("id: array", b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', code(-32600)),
        ("id: float", b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', code(-32600)),
        ("id: null", b'{"jsonrpc":"2.0","id":null,"method":"ping"}', code(-32600)),
        ("id: boolean", b'{"jsonrpc":"2.0","id":true,"method":"ping"}', code(-32600)),
        ("id: 2**64", b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}', code(-32600)),
        ("id: 200 KB string", b'{"jsonrpc":"2.0","id":"' + b"a" * 200_000 + b'","method":"ping"}', result),
        ("duplicate keys (last wins)", b'{"jsonrpc":"2.0","id":4,"id":5,"method":"ping"}',
         lambda answer: result(answer) and answer.get("id") == 5),
        ("method: number", b'{"jsonrpc":"2.0","id":6,"method":5}', code(-32600)),
        ("method: unicode and NUL", '{"jsonrpc":"2.0","id":7,"method":"tööls/\\u0000"}'.encode(), code(-32601)),
        ("method: 1 MB name", b'{"jsonrpc":"2.0","id":8,"method":"' + b"m" * 1_000_000 + b'"}',
         lambda answer: error_code(answer) == -32601 and len(json.dumps(answer)) < ECHO_BOUND),
        ("params: array", b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":[]}', code(-32602)),
        ("params: string", b'{"jsonrpc":"2.0","id":10,"method":"tools/list","params":"x"}', code(-32602)),
        ("tools/call: unknown tool", b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"nope"}}',
         code(-32602)),
        ("tools/call: arguments an array",
         b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"search","arguments":[1]}}', code(-32602)),
        ("tools/call: wrong type", b'{"jsonrpc":"2.0","id":13,"method":"tools/call",'
                                   b'"params":{"name":"search","arguments":{"query":5}}}', code(-32602)),
        ("tools/call: required missing",
         b'{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"search","arguments":{}}}', code(-32602)),
        ("tools/call: limit -1", b'{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"searchPassages",'
                                 b'"arguments":{"query":"x","limit":-1}}}', code(-32602)),
        ("tools/call: limit 1e30", b'{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"searchPassages",'
                                   b'"arguments":{"query":"x","limit":1000000000000000000000000000000}}}', code(-32602)),
        ("tools/call: 100 KB query", json.dumps({"jsonrpc": "2.0", "id": 17, "method": "tools/call", "params": {
            "name": "search", "arguments": {"query": "x" * 100_000}}}).encode(), code(-32602)),
        ("tools/call: 3 MB id echoed back bounded", huge_id, small_invalid_params),
        ("tools/call: 300k-item array echoed back bounded", huge_array, small_invalid_params),
        ("search path ../../ (no escape)", b'{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"search",'
                                           b'"arguments":{"query":"outside","path":"../"}}}',
         # No match, or (since the knowledge tools name a path no document is under) -32602: never the file.
         lambda answer: (result(answer) or error_code(answer) == -32602) and "secret" not in json.dumps(answer)),
        ("search path glob/regex metacharacters", b'{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{'
                                                  b'"name":"search","arguments":{"query":"x","path":"[*?(a+)+$"}}}',
         lambda answer: result(answer) or error_code(answer) == -32602),
        ("fetch ../../secret.md", b'{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"fetch",'
                                  b'"arguments":{"id":"../secret.md"}}}', code(-32602)),
        ("resources/read docs/..%2Fsecret.md",
         b'{"jsonrpc":"2.0","id":21,"method":"resources/read","params":{"uri":"hexmcp://docs/..%2Fsecret.md"}}',
         code(-32602)),
        ("resources/read file:///etc/passwd",
         b'{"jsonrpc":"2.0","id":22,"method":"resources/read","params":{"uri":"file:///etc/passwd"}}', code(-32602)),
        ("resources/read a.md%00.txt",
         b'{"jsonrpc":"2.0","id":23,"method":"resources/read","params":{"uri":"hexmcp://docs/a.md%00.txt"}}',
         code(-32602)),
        ("resources/read uri: number", b'{"jsonrpc":"2.0","id":24,"method":"resources/read","params":{"uri":5}}',
         code(-32602)),
        ("cursor forged", b'{"jsonrpc":"2.0","id":25,"method":"tools/list","params":{"cursor":"%%%"}}', code(-32602)),
        ("logging/setLevel nonsense", b'{"jsonrpc":"2.0","id":26,"method":"logging/setLevel","params":{"level":"x"}}',
         code(-32602)),
        ("logging/setLevel DEBUG: the levels named", b'{"jsonrpc":"2.0","id":29,"method":"logging/setLevel",'
                                                     b'"params":{"level":"DEBUG"}}',
         lambda answer: error_code(answer) == -32602 and "expected one of 'debug'" in json.dumps(answer)
         and "typing" not in json.dumps(answer)),
        ("initialize again", json.dumps(init_message(request_id=27)).encode(), code(-32600)),
        ("progressToken an object", b'{"jsonrpc":"2.0","id":28,"method":"tools/list",'
                                    b'"params":{"_meta":{"progressToken":{"a":[1]}}}}', code(-32602)),
    ]


def silent_probes() -> list[tuple[str, bytes]]:
    """Messages that must get no answer at all (notifications, responses to nothing)."""
    return [
        ("cancel of an unknown id", b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}'),
        ("cancel with an object id", b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}'),
        ("cancel without params", b'{"jsonrpc":"2.0","method":"notifications/cancelled"}'),
        ("unknown notification", b'{"jsonrpc":"2.0","method":"foo/bar"}'),
        ("response to an unknown id", b'{"jsonrpc":"2.0","id":999,"result":{}}'),
        ("error to an unknown id", b'{"jsonrpc":"2.0","id":998,"error":{"code":1,"message":"x"}}'),
    ]


# --- stdio ----------------------------------------------------------------------------------------


class Stdio:
    def __init__(self, args: list[str]) -> None:
        self.process = subprocess.Popen([*CLI, "stdio", *args], cwd=ROOT, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        self.buffer = b""

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def line(self, timeout: float = 10.0) -> bytes | None:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                return None
            chunk = os.read(self.process.stdout.fileno(), 1 << 20)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def answer_to(self, request_id: Any, timeout: float = 15.0) -> Any:
        """The answer with this id (or with id null), skipping notifications; None when none came."""
        deadline = time.monotonic() + timeout
        while (line := self.line(max(0.0, deadline - time.monotonic()))) is not None:
            message = json.loads(line)
            if "method" not in message and message.get("id") in (request_id, None):
                return message
        return None

    def next_answer(self, timeout: float = 10.0) -> Any:
        deadline = time.monotonic() + timeout
        while (line := self.line(max(0.0, deadline - time.monotonic()))) is not None:
            message = json.loads(line)
            if "method" not in message:
                return message
        return None

    def initialize(self, version: str = VERSION) -> None:
        self.write(json.dumps(init_message(version)).encode() + b"\n")
        assert self.answer_to("init", 120) is not None, "no initialize answer"
        self.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def ping(self, request_id: str = "alive") -> bool:
        self.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode() + b"\n")
        return (self.answer_to(request_id) or {}).get("result") == {}


def stdio_group(docs: Path) -> None:
    group = "stdio"
    server = Stdio([*LIGHT, "--docs", str(docs)])
    try:
        server.write(b'{"jsonrpc":"2.0","id":"early","method":"tools/list"}\n')
        early = server.answer_to("early")
        record(group, "tools/list before initialize", error_code(early) == -32600, early)
        server.initialize()
        time.sleep(1.0)  # the index build's list_changed notifications go out now, not amid the probes
        before = rss_mb(server.process.pid)
        for name, raw, check in message_probes():
            server.write(raw + b"\n")
            answer = server.next_answer(20)
            record(group, name, check(answer), answer)
        for name, raw in silent_probes():
            server.write(raw + b"\n")
            extra = server.next_answer(1.0)
            record(group, f"{name}: no answer", extra is None, extra or "no answer")
        for name, raw in [("empty batch", b"[]"), ("batch on 2025-06-18", b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]')]:
            server.write(raw + b"\n")
            answer = server.next_answer()
            record(group, name, error_code(answer) == -32600, answer)
        # Two requests under one id in one write: both are admitted before either runs, so the second is in
        # flight beside the first (before: both ran, and a cancellation naming the id silenced both).
        server.write(b'{"jsonrpc":"2.0","id":"twice","method":"tools/list"}\n' * 2)
        both = [server.answer_to("twice"), server.answer_to("twice")]
        record(group, "one id twice in flight: the second refused",
               sorted(["result" in (a or {}), error_code(a) == -32600 and "in flight" in json.dumps(a)]
                      for a in both) == [[False, True], [True, False]], both)
        server.write(b'{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n')
        record(group, "CRLF line end", (server.answer_to("crlf") or {}).get("result") == {}, "ping answered")
        message = b'{"jsonrpc":"2.0","id":"split","method":"tools/call","params":{"name":"search","arguments":{"query":"p\xc3\xa9"}}}\n'
        for byte in message:
            server.write(bytes([byte]))
        split = server.answer_to("split")
        record(group, "a message split at every byte", isinstance(split, dict) and "result" in split, split)
        server.write(b'{"jsonrpc":"2.0","id":"big","method":"ping","params":{"x":"' + b"a" * (16 << 20) + b'"}}\n')
        big = server.next_answer(30)
        record(group, "16 MiB line (cap 4 MiB)", error_code(big) == -32600, big)
        server.write(b"\n   \n")
        record(group, "blank lines: no answer", server.next_answer(1.0) is None, "no answer")
        record(group, f"alive after the probes (RSS {before} -> {rss_mb(server.process.pid)} MB)", server.ping(), "")
        server.write(b'{"jsonrpc":"2.0","id":"last","method":"ping"}')  # no newline, then EOF
        assert server.process.stdin is not None
        server.process.stdin.close()
        last = server.answer_to("last")
        code = server.process.wait(20)
        record(group, "last line without newline, then EOF", (last or {}).get("result") == {} and code == 0,
               {"answer": last, "exit": code})
    finally:
        if server.process.poll() is None:
            server.process.kill()
    # The host exits: both pipes close at once (before: RuntimeError traceback, exit 1).
    host_gone = subprocess.Popen([*CLI, "stdio", *LIGHT, "--no-knowledge"], cwd=ROOT, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert host_gone.stdin is not None and host_gone.stdout is not None and host_gone.stderr is not None
    host_gone.stdin.write(json.dumps(init_message()).encode() + b"\n")
    host_gone.stdin.flush()
    host_gone.stdout.readline()
    host_gone.stdout.close()
    host_gone.stdin.close()
    code = host_gone.wait(20)
    traceback = b"Traceback" in host_gone.stderr.read()
    record(group, "host exits (both pipes closed)", code == 0 and not traceback, {"exit": code, "traceback": traceback})


# --- HTTP -----------------------------------------------------------------------------------------


@contextlib.contextmanager
def serve(args: list[str], log: Path | None = None, tree: Path | None = None
          ) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """`hexmcp serve` with `args` on a free port, once /health answers; its stderr into `log`, if given.
    `tree`: another checkout whose own `.venv` serves (main, to compare a branch with it)."""
    port = free_port()
    cli = [str(tree / ".venv" / "bin" / "python"), "-m", "hexmcp.app.cli"] if tree is not None else CLI
    with open(log or os.devnull, "wb") as stderr:
        process = subprocess.Popen([*cli, "serve", *args, "--port", str(port)], cwd=tree or ROOT,
                                   stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        wait_healthy(process, port)
        yield process, port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()


def wait_healthy(process: subprocess.Popen[bytes], port: int, what: str = "") -> None:
    """Until `/health` answers 200 (120 s at most); `what`: told when the server exits first (its log)."""
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, f"hexmcp serve exited with {process.returncode} {what}"
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return
        assert time.monotonic() < deadline, "hexmcp serve did not become healthy"
        time.sleep(0.2)


def open_session(client: httpx.Client, version: str = VERSION) -> dict[str, str]:
    answer = client.post("/mcp", json=init_message(version), headers={"accept": ACCEPT})
    headers = {"accept": ACCEPT, "content-type": "application/json", "mcp-session-id": answer.headers["mcp-session-id"],
               "mcp-protocol-version": version}
    client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


def raw_exchange(port: int, data: bytes, then: list[bytes] = (), wait: float = 10.0) -> bytes:  # type: ignore[assignment]
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(data)
        with contextlib.suppress(OSError):
            for part in then:
                sock.sendall(part)
        received = b""
        with contextlib.suppress(OSError):
            while b"\r\n\r\n" not in received or len(received) < 120:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
        return received


def status_of(response: bytes) -> int | None:
    try:
        return int(response.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


def http_group(docs: Path) -> None:
    group = "http"
    with serve([*LIGHT, "--docs", str(docs), "--body-timeout", "3", "--head-timeout", "3"]) as (process, port):
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
        headers = open_session(client)
        before = rss_mb(process.pid)
        for name, raw, check in message_probes():
            answer = client.post("/mcp", content=raw, headers=headers)
            try:
                body: Any = answer.json()
            except ValueError:
                body = answer.text
            record(group, name, check(body), {"status": answer.status_code, "body": body})
        for name, raw in silent_probes():
            answer = client.post("/mcp", content=raw, headers=headers)
            record(group, f"{name}: 202, no body", answer.status_code == 202 and not answer.content, answer.status_code)
        ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        cases: list[tuple[str, dict[str, str], bytes, int]] = [
            ("Content-Type text/plain", {**headers, "content-type": "text/plain"}, ping, 415),
            # Bodies are read as sent (nothing inflated, so no gzip bomb): a coding is refused as such.
            ("Content-Encoding gzip (a 50 MiB bomb)", {**headers, "content-encoding": "gzip"},
             gzip.compress(ping[:-1] + b',"pad":"' + b" " * (50 << 20) + b'"}'), 415),
            ("Content-Encoding br over plain bytes", {**headers, "content-encoding": "br"}, ping, 415),
            ("Accept text/html", {**headers, "accept": "text/html"}, ping, 406),
            ("unknown session id", {**headers, "mcp-session-id": "nope"}, ping, 404),
            ("5 KB session id", {**headers, "mcp-session-id": "x" * 5000}, ping, 404),
            ("unknown protocol version header", {**headers, "mcp-protocol-version": "1999-01-01"}, ping, 400),
            ("empty body", headers, b"", 400),
            ("batch on 2025-06-18", headers, b"[" + ping + b"]", 400),
        ]
        for name, sent_headers, body_bytes, status in cases:
            answer = client.post("/mcp", content=body_bytes, headers=sent_headers)
            record(group, name, answer.status_code == status, {"status": answer.status_code, "body": answer.text[:90]})
        old = open_session(client, BATCH_VERSION)
        many = json.dumps([{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(10_000)])
        answer = client.post("/mcp", content=many, headers=old)
        record(group, "batch of 10,000 (cap 64)", answer.status_code == 400 and error_code(answer.json()) == -32600,
               answer.text[:90])
        mixed = json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, 5, [], {"id": {}}])
        answer = client.post("/mcp", content=mixed, headers=old)
        codes = [error_code(part) for part in answer.json()] if answer.status_code == 200 else []
        record(group, "mixed batch: one answer each", sorted(c for c in codes if c) == [-32600, -32600, -32600]
               and len(codes) == 4, codes)
        for name, path, body_bytes, status in [
                ("REST: malformed JSON", "/mcp/tools/call", b"{bad", 400),
                ("REST: body an array", "/mcp/tools/call", b"[1]", 400),
                ("REST: unknown method", "/mcp/nope", b"{}", 404),
                ("REST: 10 KB method name", "/mcp/" + "a" * 10_000, b"{}", 404),
                ("REST: wrong argument type", "/mcp/tools/call", b'{"name":"search","arguments":{"query":5}}', 400)]:
            answer = client.post(path, content=body_bytes, headers={"content-type": "application/json"})
            record(group, name, answer.status_code == status and len(answer.content) < ECHO_BOUND,
                   {"status": answer.status_code, "body": answer.text[:90]})
        for method in ("PUT", "PATCH", "OPTIONS"):
            answer = client.request(method, "/mcp")
            record(group, f"{method} /mcp", answer.status_code == 405, answer.status_code)
        gone = open_session(client)
        deleted = client.delete("/mcp", headers=gone)
        again = client.delete("/mcp", headers=gone)
        after = client.post("/mcp", content=ping, headers=gone)
        record(group, "DELETE session, again, then use it", (deleted.status_code, again.status_code, after.status_code)
               == (200, 404, 404), [deleted.status_code, again.status_code, after.status_code])
        head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                f"Accept: {ACCEPT}\r\n").encode()
        raw_cases = [
            ("body over the cap, with Content-Length", head + b"Content-Length: 100000000\r\n\r\n", [b"a" * 65536], 413),
            ("body over the cap, chunked", head + b"Transfer-Encoding: chunked\r\n\r\n",
             [b"100000\r\n" + b"a" * 0x100000 + b"\r\n"] * 6, 413),
            ("chunked body that never ends (3 s deadline)", head + b"Transfer-Encoding: chunked\r\n\r\n",
             [b"5\r\n{\"a\":\r\n"], 408),
            ("Content-Length and Transfer-Encoding", head + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
             [b"0\r\n\r\n"], 400),
            ("negative Content-Length", head + b"Content-Length: -1\r\n\r\n", [], 400),
            ("20,000 headers", b"POST /mcp HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: y\r\n" % n for n in range(20_000))
             + b"\r\n", [], 431),
        ]
        for name, first, rest, status in raw_cases:
            got = raw_exchange(port, first, rest, wait=15)
            record(group, name, status_of(got) == status, got[:60].decode(errors="replace"))
        sse_session = open_session(client)
        held = []
        for _ in range(50):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall((f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n"
                          f"Mcp-Session-Id: {sse_session['mcp-session-id']}\r\nMcp-Protocol-Version: {VERSION}\r\n\r\n")
                         .encode())
            held.append(sock)
        statuses: dict[int | None, int] = {}
        for sock in held:
            with contextlib.suppress(OSError):
                status = status_of(sock.recv(200))
                statuses[status] = statuses.get(status, 0) + 1
        record(group, "50 GET SSE streams on one session", statuses.get(200) == 1 and statuses.get(409) == 49, statuses)
        for sock in held:
            sock.close()
        honest = client.post("/mcp", json={"jsonrpc": "2.0", "id": "alive", "method": "tools/list"}, headers=headers)
        record(group, f"alive after the probes (RSS {before} -> {rss_mb(process.pid)} MB)",
               honest.status_code == 200 and "tools" in honest.json().get("result", {}), honest.status_code)
        ws_group(port)
        honest = client.post("/mcp", json={"jsonrpc": "2.0", "id": "alive", "method": "ping"}, headers=headers)
        record("ws", f"HTTP still served after the WebSocket probes (RSS {rss_mb(process.pid)} MB)",
               honest.status_code == 200, honest.status_code)


# --- WebSocket ------------------------------------------------------------------------------------


def ws_group(port: int) -> None:
    import websockets

    group = "ws"
    url = f"ws://127.0.0.1:{port}/ws"

    async def conversation(frames: list[Any], wait: float = 5.0, subprotocols: list[str] | None = None) -> list[Any]:
        async with websockets.connect(url, subprotocols=subprotocols, max_size=None, open_timeout=10) as ws:
            init = init_message()
            if not subprotocols:
                init.pop("jsonrpc")
            await ws.send(json.dumps(init))
            await ws.recv()
            await ws.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            for frame in frames:
                await ws.send(frame)
            got: list[Any] = []
            try:
                while True:
                    message = await asyncio.wait_for(ws.recv(), wait)
                    got.append(json.loads(message))
                    if len(got) >= len(frames):
                        break
            except asyncio.TimeoutError:
                pass
            except websockets.ConnectionClosed as closed:
                got.append({"closed": closed.rcvd.code if closed.rcvd else None})
            return got

    async def run() -> None:
        for name, raw, check in message_probes():
            got = await conversation([raw.decode("utf-8", errors="surrogateescape") if b"\xff" not in raw
                                      and b"\xef\xbb\xbf" not in raw else raw])
            answer = got[0] if got else None
            if isinstance(raw, bytes) and (b"\xff" in raw or b"\xef\xbb\xbf" in raw):
                ok = error_code(answer) in (-32600, -32700)  # sent as a binary frame: refused as such
            else:
                ok = check(answer)
            record(group, name, ok, answer)
        got = await conversation(['{"id":1,"method":"ping"}'.encode()])
        record(group, "binary frame", error_code(got[0] if got else None) == -32600, got)
        got = await conversation(["[]"])
        record(group, "empty batch", error_code(got[0] if got else None) == -32600, got)
        got = await conversation([iter(['{"id":"frag",', '"method":"ping"}'])])
        record(group, "fragmented frame", bool(got) and got[0].get("id") == "frag", got)
        got = await conversation(['{"id":3,"method":"ping","params":{"x":"' + "a" * (20 << 20) + '"}}'], wait=15)
        record(group, "20 MiB frame (cap 4 MiB): close 1009", got == [{"closed": 1009}], got)
        got = await conversation([json.dumps({"id": n, "method": "ping"}) for n in range(500)], wait=5)
        # Past 256 in flight on one socket a ping is refused as busy (-32005), but every one is answered.
        other = [m for m in got if "result" not in m and error_code(m) != -32005]
        record(group, "500 pipelined pings: each a result or busy", len(got) == 500 and not other
               and sorted(m.get("id") for m in got) == list(range(500)),
               {"answers": len(got), "busy": sum(error_code(m) == -32005 for m in got), "other": other[:2]})
        got = await conversation(['{"id":4,"method":"ping"}'], subprotocols=["mcp"])
        record(group, "subprotocol mcp without jsonrpc member", error_code(got[0] if got else None) == -32600, got)
        async with websockets.connect(url, open_timeout=10) as ws:  # close mid-request
            await ws.send(json.dumps({k: v for k, v in init_message().items() if k != "jsonrpc"}))
            await ws.recv()
            await ws.send(json.dumps({"id": 5, "method": "tools/call", "params": {"name": "search",
                                                                              "arguments": {"query": "pods"}}}))
        got = await conversation(['{"id":6,"method":"ping"}'])
        record(group, "a socket closed mid-request, then a new one", bool(got) and got[0].get("id") == 6, got)

    asyncio.run(run())


# --- hostile upstreams ----------------------------------------------------------------------------

UPSTREAM = '''
import json, sys
mode = sys.argv[1]
lists = 0  # tools/list requests received: a flood of list_changed must not turn into as many re-lists
for line in sys.stdin:
    message = json.loads(line)
    ident, method = message.get("id"), message.get("method")
    if ident is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "evil", "version": "1"}}
    elif method == "tools/list":
        lists += 1
        if mode == "many":
            result = {"tools": [{"name": "t%d" % n, "inputSchema": {"type": "object"}} for n in range(4000)],
                      "nextCursor": str(int((message.get("params") or {}).get("cursor") or 0) + 1)}
        elif mode == "onebad":  # one valid tool among a numeric name and a missing inputSchema
            result = {"tools": [{"name": 5, "inputSchema": {"type": "object"}}, {"name": "ok",
                      "inputSchema": {"type": "object"}}, {"name": "noschema"}]}
        else:
            result = {"tools": [{"name": "ok", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        if mode == "silent":
            continue
        if mode == "unreadable":  # an answer nested past the parser's 1,024 levels
            sys.stdout.write('{"jsonrpc": "2.0", "id": %s, "result": {"deep": %s%s}}\\n'
                             % (json.dumps(ident), "[" * 1100, "]" * 1100))
            sys.stdout.flush()
            continue
        if mode == "huge":
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": {"content": [
                {"type": "text", "text": "a" * (20 << 20)}]}}) + "\\n")
            sys.stdout.flush()
            continue
        if mode == "exit":
            sys.exit(1)
        if mode == "flood":  # FLOOD list_changed notifications, then the answer
            note = json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}) + "\\n"
            for _ in range(FLOOD // 1000):
                sys.stdout.write(note * 1000)
            sys.stdout.flush()
        result = {"content": [{"type": "text", "text": "fine" if mode != "flood" else "lists=%d" % lists}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)
'''


FLOOD = 20_000  # list_changed notifications an upstream sends per call in the flood probe


def upstream_group(scratch: Path) -> None:
    group = "upstream"
    script = scratch / "evil_upstream.py"
    script.write_text(f"FLOOD = {FLOOD}\n" + UPSTREAM, encoding="utf-8")

    def mounted(mode: str, idle_timeout: float | None = None) -> Stdio:
        target = f"stdio:{shlex.join([sys.executable, str(script), mode])}"
        if idle_timeout is None:
            server = Stdio([*LIGHT, "--no-knowledge", "--upstream", f"evil={target}"])
        else:  # an upstream's idle deadline is set in its [[upstream]] table
            config = scratch / f"upstream-{mode}.toml"
            config.write_text(f"[[upstream]]\nname = \"evil\"\ntarget = {json.dumps(target)}\n"
                              f"idle_timeout = {idle_timeout}\n", encoding="utf-8")
            server = Stdio([*LIGHT, "--no-knowledge", "--config", str(config)])
        server.initialize()
        time.sleep(3.0)  # the upstream is spawned and listed in the background
        return server

    def call(server: Stdio) -> Any:
        server.write(b'{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"evil__ok","arguments":{}}}\n')
        return server.answer_to("c", 30)

    for mode, expect in [("huge", "over the 16777216-byte limit"), ("exit", "unavailable"),
                         ("unreadable", "sent nothing for this request")]:
        server = mounted(mode, idle_timeout=2 if mode == "unreadable" else None)
        try:
            answer = call(server)
            text = json.dumps(answer)
            record(group, f"upstream answer: {mode}", (answer or {}).get("result", {}).get("isError") is True
                   and expect in text and server.ping(), text[:150])
        finally:
            server.process.kill()
    server = mounted("onebad")
    try:
        answer = call(server)
        server.write(b'{"jsonrpc":"2.0","id":"l","method":"tools/list"}\n')
        names = [tool["name"] for tool in (server.answer_to("l") or {}).get("result", {}).get("tools", [])
                 if tool["name"].startswith("evil")]
        record(group, "one invalid tool among valid ones: the valid one mounted and called",
               names == ["evil__ok"] and (answer or {}).get("result", {}).get("content", [{}])[0].get("text") == "fine",
               {"mounted": names, "answer": json.dumps(answer)[:100]})
    finally:
        server.process.kill()
    server = mounted("many")
    try:
        server.write(b'{"jsonrpc":"2.0","id":"l","method":"tools/list"}\n')
        listed = server.answer_to("l") or {}
        names = [tool["name"] for tool in listed.get("result", {}).get("tools", []) if tool["name"].startswith("evil")]
        record(group, f"endless tools/list: none mounted (RSS {rss_mb(server.process.pid)} MB)",
               names == [] and server.ping(), len(names))
    finally:
        server.process.kill()
    server = mounted("flood")
    try:
        flood_probe(group, server, call)
    finally:
        server.process.kill()
    server = mounted("silent")
    try:
        server.write(b'{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"evil__ok","arguments":{}}}\n')
        time.sleep(0.5)
        assert server.process.stdin is not None
        server.process.stdin.close()
        time.sleep(0.5)
        server.process.send_signal(signal.SIGTERM)
        try:
            code: Any = server.process.wait(25)
        except subprocess.TimeoutExpired:
            code = "still running 25 s after SIGTERM"
        record(group, "silent upstream, EOF, SIGTERM: exits", code == 0, code)
    finally:
        server.process.kill()


def flood_probe(group: str, server: Stdio, call: Callable[[Stdio], Any]) -> None:
    """FLOOD list_changed notifications per call, three calls: the re-lists coalesce (at most one in flight
    and one owed per flood, so the upstream sees a handful of tools/list, not tens of thousands) and the
    server's RSS stays flat."""
    rss = [rss_mb(server.process.pid)]
    for _ in range(3):
        call(server)
        time.sleep(2.0)  # the re-lists the flood asked for run now
        rss.append(rss_mb(server.process.pid))
    answer = call(server) or {}  # the upstream's count of tools/list requests so far
    text = (answer.get("result", {}).get("content") or [{}])[0].get("text", "")
    lists = int(text.removeprefix("lists=")) if text.startswith("lists=") else -1
    # 1 at mount, then per flood one re-list started and at most one owed.
    record(group, f"list_changed flood x3: {lists} re-lists, RSS {' -> '.join(map(str, rss))} MB",
           0 < lists <= 1 + 2 * 3 and rss[-1] - rss[0] < 30 and server.ping(),
           {"lists": lists, "rss_mb": rss})


# --- start-up -------------------------------------------------------------------------------------


def startup_group(scratch: Path) -> None:
    group = "startup"
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    cases = [
        ("serve --port 99999", ["serve", *LIGHT, "--no-knowledge", "--port", "99999"], "port"),
        ("serve --port -1", ["serve", *LIGHT, "--no-knowledge", "--port", "-1"], "port"),
        ("serve --docs missing", ["serve", *LIGHT, "--docs", str(scratch / "absent")], "no such file"),
        ("stdio --config not TOML", ["stdio", *LIGHT, "--config", str(scratch / "docs" / "a.md")], "TOML"),
        ("stdio --max-message-bytes -5", ["stdio", *LIGHT, "--max-message-bytes", "-5"], "positive"),
        ("serve --max-body-bytes 0", ["serve", *LIGHT, "--no-knowledge", "--max-body-bytes", "0"], "positive"),
        ("stdio --audit-log unwritable", ["stdio", *LIGHT, "--audit-log", "/proc/nope/x"], "audit log"),
    ]
    for name, args, says in cases:
        try:
            out = subprocess.run([*CLI, *args], cwd=ROOT, input=b"", capture_output=True, timeout=60, check=False)
            last = out.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
            ok = out.returncode != 0 and out.stdout == b"" and says in last[0]
            record(group, name, ok, {"exit": out.returncode, "stderr": last[0][:100]})
        except subprocess.TimeoutExpired:
            record(group, name, False, "still running after 60 s")
    out = subprocess.run([*CLI, "serve", *LIGHT, "--no-knowledge", "--port", str(busy.getsockname()[1])], cwd=ROOT,
                         input=b"", capture_output=True, timeout=60, check=False)
    lines = out.stderr.decode(errors="replace").strip().splitlines()
    record(group, "serve on a port in use: one line, exit 2", out.returncode == 2 and len(lines) == 1
           and "Address already in use" in lines[0], {"exit": out.returncode, "stderr": lines[-3:]})
    busy.close()


GROUPS = ("stdio", "http", "upstream", "startup")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=(*GROUPS, "ws"), help="one group (ws runs inside http)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON to this file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hexmcp-hostile-") as scratch_name:
        scratch = Path(scratch_name)
        docs = docs_folder(scratch)
        wanted = [args.only if args.only != "ws" else "http"] if args.only else list(GROUPS)
        for group in wanted:
            {"stdio": lambda: stdio_group(docs), "http": lambda: http_group(docs),
             "upstream": lambda: upstream_group(scratch), "startup": lambda: startup_group(scratch)}[group]()
    return summary(args.json)


def summary(json_path: Path | None) -> int:
    """The count of probes and failures, the rows written as JSON when asked; the exit status (1: a failure)."""
    failed = [row for row in ROWS if not row["ok"]]
    print(f"\n{len(ROWS)} probes, {len(failed)} failed")
    if json_path:
        json_path.write_text(json.dumps(ROWS, indent=1), encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
