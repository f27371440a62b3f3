"""`hexmcp serve` is not open by accident: a non-loopback bind needs a token (or `--allow-unauthenticated`),
the shipped placeholder token is refused, the token can come from a file, and no process's command line
(the supervisor's workers', read from /proc) ever carries it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from hexmcp.app.serve_auth import TOKEN_PLACEHOLDER, is_loopback
from hexmcp.app.start.workers import without_token_flags
from hexmcp.core.startup import ExitCode

from ..support.net import free_port
from ..support.serve_process import LIGHT, serve_process

pytestmark = pytest.mark.timeout(120)
TOKEN = "s3cret-token-for-the-ps-test-7f1c"
_AUTH_ENV = ("HEXMCP_AUTH_TOKEN", "HEXMCP_AUTH_TOKEN_FILE")


def _env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _AUTH_ENV}
    return {**env, "HEXMCP_LOG_LEVEL": "warning", **extra}


def _serve_to_exit(*flags: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hexmcp.app.cli", "serve", *LIGHT, *flags, "--port", str(free_port())],
                          env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_an_open_bind_without_auth_is_refused_in_one_line() -> None:
    out = _serve_to_exit("--host", "0.0.0.0", env=_env())
    assert out.returncode == ExitCode.USAGE
    assert out.stderr.splitlines() == [
        "hexmcp serve: refusing to serve on 0.0.0.0 without authentication; fix: set HEXMCP_AUTH_TOKEN or "
        "--auth-token-file, or pass --allow-unauthenticated to serve anyone who can reach the port"]


def test_the_deployments_placeholder_token_is_refused() -> None:
    out = _serve_to_exit("--host", "0.0.0.0", env=_env(HEXMCP_AUTH_TOKEN=f"{TOKEN_PLACEHOLDER}-with-openssl-rand"))
    assert out.returncode == ExitCode.USAGE
    assert len(out.stderr.splitlines()) == 1 and "placeholder" in out.stderr


def test_an_unreadable_token_file_is_refused_in_one_line(tmp_path: Path) -> None:
    out = _serve_to_exit("--auth-token-file", str(tmp_path / "absent"), env=_env())
    assert out.returncode == ExitCode.USAGE
    assert out.stderr.splitlines() == [f"hexmcp serve: cannot read the auth token file {tmp_path / 'absent'}: "
                                       "No such file or directory"]


def test_an_open_bind_serves_when_asked_explicitly_and_loopback_needs_nothing() -> None:
    with serve_process(*LIGHT, "--host", "0.0.0.0", "--allow-unauthenticated", env=_env()) as served:
        assert httpx.post(f"{served.base}/mcp/ping", json={}, timeout=5).status_code == 200
    with serve_process(*LIGHT, env=_env()) as served:  # 127.0.0.1 by default
        assert httpx.post(f"{served.base}/mcp/ping", json={}, timeout=5).status_code == 200


def test_a_token_from_a_file_guards_every_path_but_the_probes(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(f"{TOKEN}\n")
    with serve_process(*LIGHT, "--host", "0.0.0.0", "--auth-token-file", str(token_file), env=_env()) as served:
        assert httpx.post(f"{served.base}/mcp/ping", json={}, timeout=5).status_code == 401
        assert httpx.post(f"{served.base}/mcp/ping", json={}, headers={"authorization": f"Bearer {TOKEN}"},
                          timeout=5).status_code == 200
        live = httpx.get(f"{served.base}/livez", timeout=5)
        assert (live.status_code, live.text) == (200, "ok")  # no token: the kubelet sends none
        assert served.health().status_code == 200


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def _children(pid: int) -> list[int]:
    import psutil

    return [child.pid for child in psutil.Process(pid).children(recursive=True)]


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc")
@pytest.mark.parametrize("source", ["file", "env", "flag"])
def test_no_worker_has_the_token_on_its_command_line(tmp_path: Path, source: str) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    flags = {"file": ("--auth-token-file", str(token_file)), "env": (), "flag": ("--auth-token", TOKEN)}[source]
    env = _env(HEXMCP_AUTH_TOKEN=TOKEN) if source == "env" else _env()
    with serve_process(*LIGHT, "--workers", "2", *flags, env=env) as served:
        workers = _children(served.process.pid)
        assert len(workers) == 2
        for pid in workers:
            assert TOKEN not in _cmdline(pid), _cmdline(pid)
        if source != "flag":  # given on the command line, the supervisor's own argv has it: it warns
            assert TOKEN not in _cmdline(served.process.pid)
        for _ in range(6):  # every worker got the token: each refuses without it and serves with it
            with httpx.Client(base_url=served.base, timeout=5) as client:
                assert client.post("/mcp/ping", json={}).status_code == 401
            with httpx.Client(base_url=served.base, timeout=5) as client:
                answer = client.post("/mcp/ping", json={}, headers={"authorization": f"Bearer {TOKEN}"})
                assert answer.status_code == 200


def test_token_flags_are_taken_out_of_a_workers_argv_in_every_spelling() -> None:
    argv = ["serve", "--auth-token", "a", "--auth-token=b", "--auth-token-file", "/f", "--auth-token-file=/g",
            "--auth-tok", "c", "--aut=d", "--audit-file", "x", "--port", "1"]
    assert without_token_flags(argv) == ["serve", "--audit-file", "x", "--port", "1"]


@pytest.mark.parametrize("host,loopback", [("127.0.0.1", True), ("127.3.0.1", True), ("::1", True),
                                           ("[::1]", True), ("localhost", True), ("0.0.0.0", False),
                                           ("::", False), ("10.0.0.5", False), ("hexmcp.internal", False)])
def test_what_counts_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
