"""Security probes against real servers: an attacker's view of `hexmcp serve`, each probe with the answer it
must get.

    python -m bench.security_probes                   # every group
    python -m bench.security_probes --only pinning    # one group: defaults, rebinding, identity, tokens,
                                                      #   pinning, slow
    python -m bench.security_probes --json out.json   # the table as JSON too
    python -m bench.security_probes --against OTHER/.venv/bin/python   # another checkout's servers

Starts `hexmcp serve` as documented (loopback, no token; with `--auth-token`; as an OAuth resource server
of the real authorization server the OAuth tests use, node-oidc-provider, `tests/support/oidc_provider.py`)
and attacks it over HTTP and WebSocket: what an unauthenticated client reaches, path traversal in every
argument naming a file or resource, DNS rebinding (Host, Origin, both repeated, on HTTP and on the
WebSocket upgrade), CORS preflights, identity (forwarded addresses, sessions and tasks of another
principal), tokens (expired, not yet valid, another audience or issuer, `alg: none`, HS256 keyed with the
public key, unknown `kid`, in the query string), the memory and places one client can hold (WebSockets,
GET and listen streams, resumptions, sessions; RSS measured), a full server's fair share and the idle
timeout of streams and sockets (on small servers: `--max-streams 32`, `--stream-idle-timeout 2`) and slow
clients. Clients are told apart by source address (127.0.0.2, 127.0.0.3, ...), as a server without
authentication tells them apart.

Prints one row a probe (PASS / FAIL and what came back) and exits 1 when one failed. Not a benchmark:
nothing is timed but deadlines. The `tokens` group and the OAuth half of `identity` need node's
oidc-provider package (installed on first use by the OAuth tests' helper; skipped when npm cannot reach
its registry). Findings: bench/diaries/security_probes.md.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import httpx

from bench.hostile_probes import raw_exchange, record, rss_mb, status_of, summary, wait_healthy
from tests.support.net import free_port

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "hexmcp.app.cli"]
SERVER_CWD = ROOT  # another checkout's servers (`--against`) run from a folder that does not shadow its package
LIGHT = ["--no-classifier"]
ACCEPT = "application/json, text/event-stream"
HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
TOKEN = "security-probes-static-token-7d1e"
WS_UPGRADE = (b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
              b"Sec-WebSocket-Version: 13\r\n")


class Served:
    def __init__(self, process: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.process, self.port, self.log = process, port, log
        self.base = f"http://127.0.0.1:{port}"

    def rss(self) -> int:
        return rss_mb(self.process.pid)


@contextlib.contextmanager
def serve(args: list[str], env: dict[str, str] | None = None, port: int | None = None) -> Iterator[Served]:
    port = port or free_port()
    log = Path(tempfile.mkstemp(prefix="hexmcp-security-", suffix=".log")[1])
    with open(log, "wb") as sink:
        process = subprocess.Popen([*CLI, "serve", *args, "--port", str(port)], cwd=SERVER_CWD, stdout=sink, stderr=sink,
                                   env={**os.environ, "HEXMCP_AUTH_TOKEN": "", **(env or {})})
    served = Served(process, port, log)
    try:
        wait_healthy(process, port, what=str(log))
        yield served
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.unlink(missing_ok=True)


def raw_status(port: int, head: bytes, wait: float = 10.0) -> int | None:
    """The status of the answer to `head` (and body), sent as is on a fresh connection."""
    return status_of(raw_exchange(port, head, wait=wait))


def post_head(port: int, headers: str, path: str = "/mcp/ping") -> bytes:
    return (f"POST {path} HTTP/1.1\r\n{headers}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}").encode()


def tool_call(client: httpx.Client, name: str, arguments: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    answer = client.post("/mcp/tools/call", json={"name": name, "arguments": arguments}, headers=headers or {})
    try:
        return answer.status_code, answer.json()
    except ValueError:
        return answer.status_code, answer.text


def is_refusal(answer: Any) -> bool:
    """A tool's own error (isError) or a JSON-RPC error, naming an eventId either way."""
    status, body = answer
    text = json.dumps(body)
    return "ev-" in text and (status >= 400 or (isinstance(body, dict) and body.get("isError") is True))


def docs_folder(root: Path) -> Path:
    docs = root / "docs"
    (docs / "guides").mkdir(parents=True)
    (docs / "guides" / "a.md").write_text("# Pods\n\nSome text about kubernetes pods.\n", encoding="utf-8")
    (root / "secret.md").write_text("# Secret\n\nOUTSIDE-THE-CORPUS\n", encoding="utf-8")
    return docs


# --- defaults: what `hexmcp serve` exposes with no flags --------------------------------------------------------


def defaults_group(scratch: Path) -> None:
    group = "defaults"
    docs = docs_folder(scratch / "defaults")
    with serve([*LIGHT, "--docs", str(docs)]) as served:
        listening = next((json.loads(line) for line in served.log.read_text().splitlines()
                          if '"listening"' in line), {})
        record(group, "binds loopback by default", listening.get("url", "").startswith("http://127.0.0.1:"), listening)
        outside = None
        with contextlib.suppress(OSError):
            address = socket.gethostbyname(socket.gethostname())
            if not address.startswith("127."):
                with socket.create_connection((address, served.port), timeout=2):
                    outside = "connected"
        record(group, "not reachable on the host's own address", outside is None, outside or "refused")
        client = httpx.Client(base_url=served.base, timeout=30)
        for path in ("../", "../../etc/passwd", "/etc/passwd", "..", "guides/../../", "%2e%2e/", "\x00"):
            answer = tool_call(client, "indexDocuments", {"path": path})
            record(group, f"indexDocuments path {path!r}", is_refusal(answer), answer[1])
        for ident in ("../secret.md", "/etc/passwd", "file:///etc/passwd", "guides/../../secret.md"):
            answer = tool_call(client, "fetch", {"id": ident})
            record(group, f"fetch id {ident!r}", is_refusal(answer) and "OUTSIDE" not in json.dumps(answer), answer[1])
        for uri in ("file:///etc/passwd", "hexmcp://docs/../secret.md", "hexmcp://docs/%2e%2e/secret.md",
                    "hexmcp://docs/..%2Fsecret.md", "hexmcp://docs/%2Fetc%2Fpasswd"):
            answer = client.post("/mcp/resources/read", json={"uri": uri})
            record(group, f"resources/read {uri}", answer.status_code >= 400 and "OUTSIDE" not in answer.text
                   and "eventId" in answer.text, {"status": answer.status_code, "body": answer.text[:90]})
        for path in ("/docs/../secret.md", "/docs/%2e%2e/secret.md", "/docs/..%2fsecret.md", "/docs/%2fetc%2fpasswd",
                     "/docs//etc/passwd"):
            got = raw_status(served.port, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            record(group, f"GET {path}", got == 404, got)
        for index in range(20):  # client-chosen names must not become metric labels (unbounded series)
            client.post(f"/mcp/zz/nonsense{index}", json={})
            tool_call(client, f"nosuchtool{index}", {})
        metrics = client.get("/metrics").text
        record(group, "unknown methods and tools are no metric labels", "nonsense" not in metrics
               and "nosuchtool" not in metrics, f"{len(metrics.splitlines())} metric lines")
        refused = client.post("/mcp/ping", json={}, headers={"origin": "http://evil.example"})
        event_id = (refused.json().get("error", {}).get("data") or {}).get("eventId", "")
        time.sleep(0.3)
        record(group, "a refusal names an eventId that the log has", bool(event_id) and event_id in served.log.read_text(),
               event_id)
        health = client.get("/health").json()
        record(group, "/health on loopback shows details (pid) to this machine", "pid" in health, sorted(health)[:6])
    with serve([*LIGHT, "--no-knowledge"], env={"HEXMCP_AUTH_TOKEN": TOKEN}) as served:
        client = httpx.Client(base_url=served.base, timeout=10)
        health = client.get("/health").json()
        record(group, "with a token, /health tells strangers the status only", health == {"status": "ok"}, health)
        for path in ("/metrics", "/docs/README.md", "/ws"):
            status = client.get(path).status_code
            record(group, f"with a token, GET {path} needs it", status in (401, 426) and status != 200, status)
        record(group, "with a token, /livez says ok and nothing else", client.get("/livez").text == "ok", "ok")
    out = subprocess.run([*CLI, "serve", *LIGHT, "--no-knowledge", "--host", "0.0.0.0", "--port", str(free_port())],
                         cwd=SERVER_CWD, capture_output=True, text=True, timeout=60, env={**os.environ, "HEXMCP_AUTH_TOKEN": ""})
    record(group, "0.0.0.0 without a token refuses to start", out.returncode == 2, out.stderr.strip()[:100])


# --- rebinding: Host and Origin on HTTP and WebSocket, CORS -------------------------------------------------------


def rebinding_group() -> None:
    group = "rebinding"
    with serve([*LIGHT, "--no-knowledge", "--cors-origins", "https://app.example"]) as served:
        port = served.port
        cases = [
            ("Host evil.example", f"Host: evil.example:{port}\r\n", 403),
            ("no Host", "", 403),
            ("Host 127.0.0.1", f"Host: 127.0.0.1:{port}\r\n", 200),
            ("Origin evil.example", f"Host: 127.0.0.1:{port}\r\nOrigin: http://evil.example\r\n", 403),
            ("Origin localhost on another port", f"Host: 127.0.0.1:{port}\r\nOrigin: http://localhost:5173\r\n", 403),
            ("Origin null", f"Host: 127.0.0.1:{port}\r\nOrigin: null\r\n", 403),
            ("Origin this server", f"Host: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n", 200),
            ("Origin configured CORS origin", f"Host: 127.0.0.1:{port}\r\nOrigin: https://app.example\r\n", 200),
            ("two Hosts, ours first", f"Host: 127.0.0.1:{port}\r\nHost: evil.example\r\n", 400),
            ("two Hosts, evil first", f"Host: evil.example\r\nHost: 127.0.0.1:{port}\r\n", 400),
            ("two Origins, ours first", f"Host: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n"
                                        "Origin: http://evil.example\r\n", 403),
        ]
        for name, headers, status in cases:
            got = raw_status(port, post_head(port, headers))
            record(group, f"POST: {name}", got == status, got)
            upgrade = raw_status(port, f"GET /ws HTTP/1.1\r\n{headers}".encode() + WS_UPGRADE + b"\r\n")
            # A repeated Origin on an upgrade may be refused by the WebSocket handshake parser first (400).
            record(group, f"WebSocket upgrade: {name}", upgrade == 101 if status == 200 else upgrade in (status, 400),
                   upgrade)
        preflight = "OPTIONS /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: POST\r\n\r\n"
        for origin, allowed in (("https://app.example", True), ("http://evil.example", False)):
            got = raw_status(port, preflight.format(port=port, origin=origin).encode())
            record(group, f"CORS preflight from {origin}", got == 200 if allowed else got in (400, 403), got)
        text_plain = (f"POST /mcp/tools/call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: text/plain\r\n"
                      f"Content-Length: 2\r\n\r\n{{}}").encode()
        record(group, "REST call as text/plain (no preflight)", raw_status(port, text_plain) == 415, "415")


# --- identity -----------------------------------------------------------------------------------------------------


def identity_group() -> None:
    group = "identity"
    with serve([*LIGHT, "--no-knowledge", "--rate-limit", "2/s", "--rate-burst", "2"]) as served:
        statuses = []
        with httpx.Client(base_url=served.base, timeout=10) as client:
            for index in range(4):
                statuses.append(client.post("/mcp/ping", json={}, headers={
                    "x-forwarded-for": f"203.0.113.{index}", "authorization": f"Bearer made-up-{index}"}).status_code)
        record(group, "X-Forwarded-For / made-up bearer from an untrusted peer: one budget", 429 in statuses, statuses)
    with serve([*LIGHT, "--no-knowledge", "--rate-limit", "2/s", "--rate-burst", "2", "--trusted-proxies",
                "127.0.0.0/8"]) as served:
        statuses = []
        with httpx.Client(base_url=served.base, timeout=10) as client:
            for index in range(4):
                statuses.append(client.post("/mcp/ping", json={}, headers={
                    "x-forwarded-for": f"203.0.113.{index}"}).status_code)
        record(group, "X-Forwarded-For from a trusted proxy: one budget per forwarded client", 429 not in statuses,
               statuses)


def oauth_world(port: int) -> Any:
    from tests.support.oidc_provider import OTHER_CLIENT, Provider, new_key

    resource = f"http://127.0.0.1:{port}/mcp"
    other = "http://127.0.0.1:9/another-server"
    everything = "mcp:read mcp:tools mcp:admin"
    key = new_key()
    provider = Provider(free_port(), resources={resource: {"scope": everything, "ttl": 600},
                                                other: {"scope": everything, "ttl": 600},
                                                opaque_resource(port): {"scope": everything, "ttl": 600,
                                                                        "format": "opaque"}}, keys=[key])
    tokens = {"A": provider.client_credentials(resource, everything),
              "B": provider.client_credentials(resource, everything, client=OTHER_CLIENT),
              "A-read": provider.client_credentials(resource, "mcp:read"),
              "other-audience": provider.client_credentials(other, everything)}
    return provider, resource, key, tokens


def opaque_resource(port: int) -> str:
    """The resource URI of the introspecting server (the JWT one's port + 1 is not guaranteed free: a path)."""
    return f"http://127.0.0.1:{port}/opaque"


def oauth_groups(wanted: list[str]) -> None:
    try:
        from tests.support.oidc_provider import ProviderUnreachable
        port = free_port()
        provider, resource, key, tokens = oauth_world(port)
    except (ImportError, ProviderUnreachable) as error:  # type: ignore[misc]
        record("tokens", "skipped: no authorization server", True, str(error)[:100])
        return
    try:
        with serve([*LIGHT, "--no-knowledge", "--oauth-issuer", provider.issuer, "--oauth-resource", resource],
                   env={"HEXMCP_AUTH_TOKEN": TOKEN}, port=port) as served:
            if "identity" in wanted:
                oauth_identity(served, tokens)
            if "tokens" in wanted:
                token_probes(served, provider, resource, key, tokens)
        if "tokens" in wanted:
            introspection_probes(provider, port)
    finally:
        provider.stop()


def introspection_probes(provider: Any, jwt_port: int) -> None:
    """A flood of made-up opaque tokens from one address against a server that introspects every new token:
    what the issuer is asked, and what an honest client's first request (a fresh token) waits meanwhile,
    beside the same flood without tokens (which costs the server the same parsing and nothing else)."""
    from tests.support.oidc_provider import RESOURCE_SERVER

    group = "tokens"
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    accepted = opaque_resource(jwt_port)
    with tempfile.NamedTemporaryFile("w", suffix=".secret") as secret:
        secret.write(RESOURCE_SERVER["client_secret"])
        secret.flush()
        with serve([*LIGHT, "--no-knowledge", "--oauth-issuer", provider.issuer, "--oauth-resource", resource,
                    "--oauth-audience", accepted, "--oauth-validation", "introspection", "--oauth-client-id",
                    RESOURCE_SERVER["client_id"], "--oauth-client-secret-file", secret.name], port=port) as served:

            async def honest(rounds: int) -> list[tuple[float, int]]:
                seen = []
                async with _client(served.base, "127.0.0.3") as client:
                    for _ in range(rounds):
                        token = await asyncio.to_thread(provider.client_credentials, accepted, "mcp:read mcp:tools")
                        started = time.perf_counter()
                        answer = await client.post("/mcp/ping", json={}, headers=bearer(token))
                        seen.append(((time.perf_counter() - started) * 1000, answer.status_code))
                return seen

            async def flood(stop: asyncio.Event, made_up: bool) -> dict[int, int]:
                outcomes: dict[int, int] = {}

                async def one(client: httpx.AsyncClient) -> None:
                    while not stop.is_set():
                        headers = bearer(base64.urlsafe_b64encode(os.urandom(24)).decode()) if made_up else {}
                        status = (await client.post("/mcp/ping", json={}, headers=headers)).status_code
                        outcomes[status] = outcomes.get(status, 0) + 1

                async with _client(served.base, "127.0.0.2") as client:
                    await asyncio.gather(*(one(client) for _ in range(64)))
                return outcomes

            async def phases() -> dict[str, Any]:
                figures: dict[str, Any] = {"quiet": await honest(20)}
                for name, made_up in (("no-token flood", False), ("made-up-token flood", True)):
                    stop = asyncio.Event()
                    running = asyncio.ensure_future(flood(stop, made_up))
                    await asyncio.sleep(2)
                    figures[name] = await honest(20)
                    stop.set()
                    figures[name + " outcomes"] = await running
                return figures

            figures = asyncio.run(phases())

    def median(rows: list[tuple[float, int]]) -> float:
        ordered = sorted(ms for ms, _ in rows)
        return round(ordered[len(ordered) // 2], 1)

    outcomes = figures["made-up-token flood outcomes"]
    honest_ok = all(status == 200 for name in ("quiet", "no-token flood", "made-up-token flood")
                    for _, status in figures[name])
    record(group, "introspection: 64 made-up tokens at once from one address: "
           f"{outcomes}; honest first request p50 quiet {median(figures['quiet'])} ms, "
           f"beside a no-token flood {median(figures['no-token flood'])} ms, "
           f"beside the made-up-token flood {median(figures['made-up-token flood'])} ms",
           honest_ok and outcomes.get(503, 0) > 0, outcomes)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def oauth_identity(served: Served, tokens: dict[str, str]) -> None:
    group = "identity"
    client = httpx.Client(base_url=served.base, timeout=10)
    opened = client.post("/mcp", headers={"accept": ACCEPT, **bearer(tokens["A"])}, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}})
    session = {"accept": ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": HANDSHAKE}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    for who, token in (("another subject", tokens["B"]), ("the static token", TOKEN)):
        got = client.post("/mcp", headers={**session, **bearer(token)}, json=ping).status_code
        record(group, f"A's session used by {who}: POST", got == 404, got)
        with client.stream("GET", "/mcp", headers={**session, **bearer(token), "last-event-id": "1_1"}) as stream:
            record(group, f"A's session used by {who}: GET resume", stream.status_code == 404, stream.status_code)
        got = client.delete("/mcp", headers={**session, **bearer(token)}).status_code
        record(group, f"A's session used by {who}: DELETE", got == 404, got)
    got = client.post("/mcp", headers={**session, **bearer(tokens["A"])}, json=ping).status_code
    record(group, "A's session still A's", got == 200, got)
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}
    modern = {"accept": ACCEPT, "mcp-protocol-version": MODERN}
    for who, token in (("another subject", tokens["B"]),):
        message = {"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": "t-made-up", "_meta": meta}}
        answer = client.post("/mcp", headers={**modern, "mcp-method": "tasks/get", "mcp-name": "t-made-up",
                                              **bearer(token)}, json=message)
        record(group, f"tasks/get of an id not one's own ({who})", '"code":-32602' in answer.text.replace(" ", ""),
               answer.text[:100])


def token_probes(served: Served, provider: Any, resource: str, key: dict[str, Any], tokens: dict[str, str]) -> None:
    import jwt
    from cryptography.hazmat.primitives import serialization
    from jwt.algorithms import RSAAlgorithm

    group = "tokens"
    private = RSAAlgorithm.from_jwk(json.dumps(key))
    now = int(time.time())
    claims = {"iss": provider.issuer, "aud": resource, "sub": "forged", "exp": now + 600, "iat": now,
              "scope": "mcp:read mcp:tools"}
    kid = {"kid": key["kid"]}

    def b64(value: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    public_pem = private.public_key().public_bytes(serialization.Encoding.PEM,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo)
    signing_input = f"{b64({'alg': 'HS256', 'typ': 'JWT', **kid})}.{b64(claims)}"
    hs256 = signing_input + "." + base64.urlsafe_b64encode(
        hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()).rstrip(b"=").decode()
    refused = {
        "expired": jwt.encode({**claims, "exp": now - 3600}, private, "RS256", kid),
        "not valid yet": jwt.encode({**claims, "nbf": now + 3600}, private, "RS256", kid),
        "another audience (minted)": jwt.encode({**claims, "aud": "http://127.0.0.1:9/another-server"}, private,
                                                "RS256", kid),
        "another audience (issued by the server)": tokens["other-audience"],
        "the audience with a trailing slash": jwt.encode({**claims, "aud": resource + "/"}, private, "RS256", kid),
        "another issuer": jwt.encode({**claims, "iss": "http://evil.example"}, private, "RS256", kid),
        "no exp": jwt.encode({k: v for k, v in claims.items() if k != "exp"}, private, "RS256", kid),
        "alg none": f"{b64({'alg': 'none', 'typ': 'JWT'})}.{b64(claims)}.",
        "HS256 keyed with the public key": hs256,
        "unknown kid": jwt.encode(claims, private, "RS256", {"kid": "not-published"}),
        "kid that is a path": jwt.encode(claims, private, "RS256", {"kid": "../../etc/passwd"}),
        "a key embedded in the header": jwt.encode(claims, private, "RS256", {"kid": "x", "jwk": {"kty": "oct"}}),
        "not a JWT": "garbage.garbage.garbage",
    }
    client = httpx.Client(base_url=served.base, timeout=10)
    for name, token in refused.items():
        answer = client.post("/mcp/ping", json={}, headers=bearer(token))
        challenge = answer.headers.get("www-authenticate", "")
        record(group, name, answer.status_code == 401 and 'error="invalid_token"' in challenge
               and "resource_metadata=" in challenge, {"status": answer.status_code, "challenge": challenge[:80]})
    answer = client.post(f"/mcp/ping?access_token={tokens['A']}", json={})
    record(group, "a token in the query string is not read", answer.status_code == 401, answer.status_code)
    answer = client.post("/mcp/ping", json={}, headers={"authorization": f"Basic {tokens['A']}"})
    record(group, "a token under another scheme is not read", answer.status_code == 401, answer.status_code)
    answer = client.post("/mcp/ping", json={}, headers=bearer(tokens["A"]))
    record(group, "the issuer's token for this resource is served", answer.status_code == 200, answer.status_code)
    metadata = client.get("/.well-known/oauth-protected-resource/mcp").json()
    record(group, "RFC 9728 metadata names this resource and its issuer",
           metadata.get("resource") == resource and metadata.get("authorization_servers") == [provider.issuer],
           metadata)
    missing = client.post("/mcp/ping", json={})
    challenge = missing.headers.get("www-authenticate", "")
    record(group, "401 without a token points at the metadata", missing.status_code == 401
           and "/.well-known/oauth-protected-resource/mcp" in challenge and "error=" not in challenge, challenge[:90])
    evil_host = client.post("/mcp/ping", json={}, headers={"host": "evil.example"})
    record(group, "the metadata URL is not taken from the Host header", evil_host.status_code == 403,
           evil_host.status_code)
    read_only = bearer(tokens["A-read"])
    listed = client.post("/mcp/tools/list", json={}, headers=read_only).status_code
    called = client.post("/mcp/tools/call", json={"name": "list_categories", "arguments": {}}, headers=read_only)
    record(group, "a read-only token lists tools", listed == 200, listed)
    record(group, "a read-only token cannot call a tool (403 insufficient_scope)", called.status_code == 403
           and "insufficient_scope" in called.headers.get("www-authenticate", ""), called.status_code)
    for path in ("./tools/call", "tools/call/../tools/call"):
        got = client.post(f"/mcp/{path}", json={"name": "list_categories", "arguments": {}}, headers=read_only)
        record(group, f"REST path spelled {path!r} with a read-only token", got.status_code in (403, 404),
               got.status_code)
    opened = client.post("/mcp", headers={"accept": ACCEPT, **read_only}, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}})
    batch = [{"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
             {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_categories", "arguments": {}}}]
    got = client.post("/mcp", json=batch, headers={"accept": ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"],
                                                   "mcp-protocol-version": "2025-03-26", **read_only})
    record(group, "a batch hiding a tools/call behind a tools/list", got.status_code == 403, got.status_code)
    ws = raw_status(served.port, f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
                                 f"Authorization: Bearer {tokens['A-read']}\r\n".encode() + WS_UPGRADE + b"\r\n")
    record(group, "a WebSocket with a read-only token", ws == 403, ws)


# --- pinning: places and memory one client holds ---------------------------------------------------------------


async def _websockets(port: int, addresses: list[str], each: int) -> tuple[list[Any], dict[Any, int]]:
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    async def one(address: str) -> Any:
        try:
            return await connect(f"ws://127.0.0.1:{port}/ws", local_addr=(address, 0), open_timeout=15)
        except InvalidStatus as refused:
            return refused.response.status_code
        except Exception as error:  # noqa: BLE001 - a probe reports what it met
            return type(error).__name__

    opened: list[Any] = []
    outcomes: dict[Any, int] = {}
    for address in addresses:
        for start in range(0, each, 50):
            for got in await asyncio.gather(*(one(address) for _ in range(start, min(each, start + 50)))):
                if isinstance(got, (int, str)):
                    outcomes[got] = outcomes.get(got, 0) + 1
                else:
                    opened.append(got)
                    outcomes[101] = outcomes.get(101, 0) + 1
    return opened, outcomes


async def _session(client: httpx.AsyncClient) -> dict[str, str]:
    opened = await client.post("/mcp", headers={"accept": ACCEPT}, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "p", "version": "1"}}})
    headers = {"accept": ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": HANDSHAKE}
    await client.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers


@contextlib.asynccontextmanager
async def _listen(client: httpx.AsyncClient) -> AsyncIterator[httpx.Response]:
    message = {"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": True},
        "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}}}
    async with client.stream("POST", "/mcp", json=message, headers={
            "accept": ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": "subscriptions/listen"}) as response:
        yield response


def _client(base: str, address: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=base, timeout=15, limits=httpx.Limits(max_connections=2000),
                             transport=httpx.AsyncHTTPTransport(local_address=address, limits=httpx.Limits(
                                 max_connections=2000)))


def pinning_group() -> None:
    group = "pinning"
    with serve([*LIGHT, "--no-knowledge"]) as served:
        before = served.rss()

        async def websockets() -> None:
            from websockets.asyncio.client import connect

            async def fresh_ping() -> Any:
                try:
                    async with connect(f"ws://127.0.0.1:{served.port}/ws", local_addr=("127.0.0.99", 0)) as fresh:
                        await fresh.send(json.dumps({"id": 1, "method": "ping"}))
                        return json.loads(await fresh.recv())
                except Exception as error:  # noqa: BLE001 - a probe reports what it met
                    return repr(error)[:90]

            one, outcomes = await _websockets(served.port, ["127.0.0.2"], 130)
            record(group, f"130 WebSockets from one client: {outcomes}", outcomes == {101: 128, 503: 2}, outcomes)
            more, _ = await _websockets(served.port, [f"127.0.0.{n}" for n in range(3, 9)], 128)
            held = one + more
            answer = await fresh_ping()
            record(group, f"7 clients hold {len(held)} WebSockets (RSS {before} -> {served.rss()} MB): "
                   "a fresh client is served", isinstance(answer, dict) and answer.get("id") == 1, answer)
            eighth, _ = await _websockets(served.port, ["127.0.0.9"], 128)  # the server's 1,024 are taken
            ninth, admitted = await _websockets(served.port, ["127.0.0.10"], 128)
            held += eighth + ninth
            await asyncio.sleep(1)  # the closes reach the hoarders' sockets
            closes = _close_codes(held)
            record(group, f"a 9th client at the full 1,024: {admitted}, its fair share 1,024 // 9 = 113, "
                   f"hoarders' oldest idle sockets closed {closes}", admitted == {101: 113, 503: 15}
                   and closes == {1013: 113}, closes)
            answer = await fresh_ping()
            await asyncio.sleep(1)
            closes = _close_codes(held)
            record(group, f"then a fresh client (fair share 1,024 // 10 = 102) is served, one more hoarder's "
                   f"socket closed: {closes}", isinstance(answer, dict) and answer.get("id") == 1
                   and closes == {1013: 114}, answer)
            for ws in held:
                await ws.close()

        asyncio.run(websockets())

        async def streams() -> None:
            async with _client(served.base, "127.0.0.2") as mine, _client(served.base, "127.0.0.3") as theirs, \
                    contextlib.AsyncExitStack() as held:
                statuses: dict[int, int] = {}
                for _ in range(140):
                    response = await held.enter_async_context(_listen(mine))
                    statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                async with _listen(theirs) as other:
                    record(group, f"140 listen streams from one client: {statuses}; another client's",
                           statuses == {200: 128, 503: 12} and other.status_code == 200, other.status_code)
                headers = await _session(theirs)
                first = await held.enter_async_context(theirs.stream("GET", "/mcp", headers=headers))
                lines = first.aiter_lines()
                event_id = (await anext(lines)).removeprefix("id:").strip()
                resumed: dict[int, int] = {}
                taken_over, ending = 0, True
                for _ in range(200):
                    again = await held.enter_async_context(theirs.stream("GET", "/mcp", headers={
                        **headers, "last-event-id": event_id}))
                    resumed[again.status_code] = resumed.get(again.status_code, 0) + 1
                    if ending:  # once a connection taken over stays open, the later ones will too: stop waiting
                        ending = False
                        with contextlib.suppress(TimeoutError, httpx.HTTPError):
                            async with asyncio.timeout(5):
                                async for _ in lines:
                                    pass
                                taken_over, ending = taken_over + 1, True
                    lines = again.aiter_lines()
                record(group, f"one GET stream resumed 200 times: {resumed}, earlier connection ended {taken_over}",
                       resumed == {200: 200} and taken_over == 200, {"rss": served.rss()})

        asyncio.run(streams())

        async def sessions() -> None:
            async with _client(served.base, "127.0.0.4") as churner, _client(served.base, "127.0.0.5") as other:
                others = await _session(other)
                first = await _session(churner)
                for _ in range(1000):
                    await churner.post("/mcp", headers={"accept": ACCEPT}, json={
                        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                            "protocolVersion": HANDSHAKE, "capabilities": {},
                            "clientInfo": {"name": "c", "version": "1"}}})
                ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
                own = (await churner.post("/mcp", headers=first, json=ping)).status_code
                theirs = (await other.post("/mcp", headers=others, json=ping)).status_code
                record(group, f"1,000 sessions from one client (RSS {served.rss()} MB): its first evicted, "
                       "another client's kept", (own, theirs) == (404, 200), {"own first": own, "other": theirs})

        asyncio.run(sessions())
        alive = httpx.post(f"{served.base}/mcp/ping", json={}, timeout=10).status_code
        record(group, f"alive after pinning (RSS {before} -> {served.rss()} MB)", alive == 200, alive)


def _close_codes(sockets: list[Any]) -> dict[int, int]:
    """How many of `sockets` the server closed, by close code."""
    codes: dict[int, int] = {}
    for ws in sockets:
        if ws.close_code is not None:
            codes[ws.close_code] = codes.get(ws.close_code, 0) + 1
    return codes


def fair_share_group() -> None:
    """Fair share on a small server (32 places, 8 per client), and the idle timeout (2 s) (ADR 1214)."""
    group = "pinning"
    try:
        _fair_share_probes(group)
    except AssertionError as refused:  # a server from before ADR 1214 (`--against`) refuses the flags
        record(group, "fair share and idle timeout: the server takes --max-streams, --stream-idle-timeout",
               False, str(refused)[:90])


def _fair_share_probes(group: str) -> None:
    with serve([*LIGHT, "--no-knowledge", "--max-streams", "32", "--max-streams-per-client", "8",
                "--stream-idle-timeout", "0"]) as served:

        async def streams() -> None:
            async with contextlib.AsyncExitStack() as held:
                clients = [await held.enter_async_context(_client(served.base, f"127.0.0.{n}")) for n in range(2, 6)]
                opened = []
                for client in clients:  # 4 clients x 8 GET streams: the server's 32
                    for _ in range(8):
                        response = await held.enter_async_context(client.stream("GET", "/mcp",
                                                                                headers=await _session(client)))
                        opened.append(response.aiter_lines())
                        await anext(opened[-1])  # the priming event: the stream is open
                fresh = await held.enter_async_context(_client(served.base, "127.0.0.9"))
                async with _listen(fresh) as listen:
                    ended = sum(await asyncio.gather(*(_ended(lines, 2.0) for lines in opened)))
                    record(group, f"4 clients hold a server's 32 streams: a fresh client's listen stream "
                           f"{listen.status_code}, hoarders' GET streams ended {ended} (to be resumed)",
                           listen.status_code == 200 and ended == 1, {"ended": ended})

        asyncio.run(streams())

    with serve([*LIGHT, "--no-knowledge", "--stream-idle-timeout", "2"]) as served:

        async def idle() -> None:
            from websockets.asyncio.client import connect

            async with _client(served.base, "127.0.0.2") as client, contextlib.AsyncExitStack() as held, \
                    connect(f"ws://127.0.0.1:{served.port}/ws", local_addr=("127.0.0.2", 0)) as socket_:
                get = await held.enter_async_context(client.stream("GET", "/mcp", headers=await _session(client)))
                listen = await held.enter_async_context(_listen(client))
                started = time.monotonic()
                ended = await asyncio.gather(_ended(get.aiter_lines(), 6.0), _ended(listen.aiter_lines(), 6.0),
                                             _ended(_frames(socket_), 6.0))
                record(group, f"idle timeout 2 s: GET stream, listen stream, WebSocket ended {ended} within "
                       f"{time.monotonic() - started:.1f} s, the socket with {socket_.close_code} "
                       f"'{socket_.close_reason}'", ended == [1, 1, 1] and socket_.close_code == 1000, ended)

        asyncio.run(idle())


async def _frames(ws: Any) -> AsyncIterator[str]:
    from websockets.exceptions import ConnectionClosed

    with contextlib.suppress(ConnectionClosed):
        while True:
            yield await ws.recv()


async def _ended(lines: AsyncIterator[str], within: float) -> int:
    """1 if the stream whose `lines` these are ends within `within` seconds, else 0."""
    try:
        async with asyncio.timeout(within):
            async for _ in lines:
                pass
        return 1
    except (TimeoutError, httpx.HTTPError):
        return 0


# --- slow clients --------------------------------------------------------------------------------------------------


def slow_group() -> None:
    group = "slow"
    with serve([*LIGHT, "--no-knowledge", "--head-timeout", "2", "--body-timeout", "3"]) as served:
        with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
            sock.sendall(b"POST /mcp/ping HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            started = time.monotonic()
            with contextlib.suppress(OSError):
                while sock.recv(4096):
                    pass
            record(group, "a head never finished is closed (head timeout 2 s)", time.monotonic() - started < 8,
                   f"closed after {time.monotonic() - started:.1f} s")
        with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
            sock.sendall(b"POST /mcp/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000\r\n\r\n{")
            received = b""
            with contextlib.suppress(OSError):
                for _ in range(8):
                    sock.sendall(b" ")
                    time.sleep(1)
                    sock.settimeout(0.1)
                    with contextlib.suppress(socket.timeout):
                        received += sock.recv(4096)
                    if received:
                        break
            record(group, "a body trickled a byte a second gets 408 (body timeout 3 s)", received.startswith(
                b"HTTP/1.1 408"), received[:30])
        many = "".join(f"X-H{index}: {'v' * 20}\r\n" for index in range(3000))
        got = raw_status(served.port, post_head(served.port, f"Host: 127.0.0.1\r\n{many}"))
        record(group, "3,000 header lines (about 80 KB)", got == 431, got)


GROUPS = ("defaults", "rebinding", "identity", "tokens", "pinning", "slow")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=GROUPS, help="one group")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON to this file")
    parser.add_argument("--against", metavar="PYTHON",
                        help="serve with this interpreter's hexmcp (another checkout's venv) instead of this one's")
    args = parser.parse_args(argv)
    wanted = [args.only] if args.only else list(GROUPS)
    global SERVER_CWD
    with tempfile.TemporaryDirectory(prefix="hexmcp-security-") as scratch_name:
        scratch = Path(scratch_name)
        if args.against:
            CLI[0] = args.against
            SERVER_CWD = scratch
        if "defaults" in wanted:
            defaults_group(scratch)
        if "rebinding" in wanted:
            rebinding_group()
        if "identity" in wanted:
            identity_group()
        if "identity" in wanted or "tokens" in wanted:
            oauth_groups(wanted)
        if "pinning" in wanted:
            pinning_group()
            fair_share_group()
        if "slow" in wanted:
            slow_group()
    return summary(args.json)


if __name__ == "__main__":
    sys.exit(main())
