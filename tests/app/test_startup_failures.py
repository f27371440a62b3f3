"""Start-up failures of real `hexmcp` processes: a bad flag, variable or config value is one line on stderr
naming it, exit 2, nothing on stdout, no traceback; an unreachable dependency that may come up later is a
warning and a start. The probes that found these, and what they did before: bench/diaries/startup.md."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from typing import Iterator

import pytest

from hexmcp.core.startup import ExitCode

LIGHT = ("--no-classifier", "--no-knowledge")


def hexmcp(*words: str, env: dict[str, str] | None = None, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hexmcp.app.cli", *words], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout, check=False,
                          env={**os.environ, "CI": "true", **(env or {})})


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something else listens on: a serve that gets this far stops there, before loading anything."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def one_line_refusal(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == ExitCode.USAGE, done.stderr[-800:]
    assert done.stdout == "" and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-800:]
    return lines[0]


@pytest.mark.parametrize(("words", "expected"), [
    # argparse's own errors came after the command's whole usage: 45 lines for serve, 25 for stdio.
    (("serve", "--port", "abc"), "hexmcp serve: error: argument --port: must be a port number (0-65535), got 'abc'"),
    (("stdio", "--max-message-bytes", "0"), "hexmcp stdio: error: argument --max-message-bytes: must be a positive"),
    ((), "hexmcp: error: the following arguments are required: command; hexmcp --help lists the commands"),
    # Words no flag took were refused by the top-level parser, naming neither the command nor the flag meant.
    (("serve", "--prot", "1"), "hexmcp serve: error: unrecognized arguments: --prot 1 (did you mean --port?)"),
    (("stdio", "--workers", "2"), "hexmcp stdio: error: unrecognized arguments: --workers 2"),
    # Out-of-range ports reached bind() in --workers' parent: an OverflowError traceback, exit 1.
    (("serve", "--workers", "2", "--port", "70000"), "argument --port: must be a port number (0-65535), got 70000"),
    # A traceback once the app was built, exit 1.
    (("serve", "--trusted-proxies", "10.0.0.0/8", "notacidr"), "argument --trusted-proxies: must be an IP address"),
    (("serve", "--allowed-origins", "ftp://x"), "argument --allowed-origins: allowed origin 'ftp://x' is not scheme"),
    (("serve", "--allowed-hosts", ":80"), "argument --allowed-hosts: allowed host ':80' has no name"),
    # Accepted, and never matched any request.
    (("serve", "--cors-origins", "%%%"), "argument --cors-origins: allowed origin '%%%' is not a host name"),
    (("serve", "--allowed-hosts", "*.example.com"), "allowed host '*.example.com' is not a host name or address"),
    # Path("") is the current directory: the server indexed whatever folder it was started in.
    (("serve", "--docs", ""), "hexmcp serve: error: argument --docs: must name a file or folder, got an empty"),
    (("index", ""), "hexmcp index: error: argument PATH: must name a file or folder, got an empty string"),
    # An empty --config was no config at all: the server started on defaults without a word.
    (("serve", "--config", ""), "hexmcp serve: error: argument --config: must name a TOML file, got an empty"),
    # redis-py takes `redis://` as localhost:6379, and a bad port or database only at the first task call.
    (("stdio", "--task-store", "redis://"), "argument --task-store: 'redis://': names no host"),
    (("stdio", "--task-store", "redis://u:hunter2@h:x/0"), "'redis://u:***@h:x/0': has a port that is not a number"),
    (("stdio", "--task-store", "redis://h:6379/x"), "the database must be a number, got 'x'"),
])
def test_a_bad_value_is_one_line_naming_it(words, expected) -> None:
    line = one_line_refusal(hexmcp(*words))
    assert line.startswith(expected) if expected.startswith("hexmcp") else expected in line, line
    assert "hunter2" not in line


def test_workers_beyond_the_bound_are_refused_before_any_starts(busy_port) -> None:
    # Before: `--workers 99999999999999999999999` started processes until the machine gave out. On the old
    # code this probe stops at the busy port instead, so a regression cannot start a single worker.
    line = one_line_refusal(hexmcp("serve", *LIGHT, "--workers", "257", "--port", str(busy_port)))
    assert line == "hexmcp serve: error: argument --workers: must be from 1 to 256 (each worker loads its own model), got 257"


def test_the_same_value_from_the_environment_and_the_file_is_refused_the_same_way(tmp_path) -> None:
    assert "HEXMCP_TRUSTED_PROXIES: must be an IP address" in one_line_refusal(
        hexmcp("serve", env={"HEXMCP_TRUSTED_PROXIES": "junk"}))
    config = tmp_path / "hexmcp.toml"
    config.write_text('[serve]\ndocs = [""]\n', encoding="utf-8")
    assert "serve.docs in hexmcp.toml: must name a file or folder" in one_line_refusal(
        hexmcp("serve", "--config", str(config)))


def test_an_unreachable_redis_task_store_is_a_warning_and_stdio_still_serves(closed_port) -> None:
    # Before: not a word until a client's first task-augmented call failed.
    done = hexmcp("stdio", *LIGHT, "--task-store", f"redis://u:hunter2@127.0.0.1:{closed_port}/0")
    assert done.returncode == 0 and done.stdout == "", done.stderr[-800:]
    warning = [line for line in done.stderr.splitlines() if "the task store does not answer" in line]
    assert len(warning) == 1 and f"redis://u:***@127.0.0.1:{closed_port}/0" in warning[0], done.stderr[-800:]
    assert "hunter2" not in done.stderr


def test_stateless_without_a_shared_secret_says_so(busy_port) -> None:
    done = hexmcp("serve", *LIGHT, "--stateless", "--port", str(busy_port), env={"HEXMCP_STATE_SECRET": ""})
    lines = done.stderr.strip().splitlines()
    assert done.returncode == ExitCode.USAGE and lines[0].startswith(
        "hexmcp serve: warning: --stateless without $HEXMCP_STATE_SECRET"), done.stderr[-800:]
    assert "cannot listen" in lines[-1]
    quiet = hexmcp("serve", *LIGHT, "--stateless", "--port", str(busy_port), env={"HEXMCP_STATE_SECRET": "s" * 32})
    assert "warning" not in quiet.stderr and quiet.returncode == ExitCode.USAGE


class _Child:
    """A stand-in worker process for the supervisor's loop: exits when signalled."""

    started: list["_Child"] = []

    def __init__(self, argv, *, env, pass_fds) -> None:
        self.env, self.pid, self.returncode = env, 10_000 + len(self.started), None
        self.started.append(self)
        if len(self.started) == 2:  # the orchestrator's SIGTERM arrives while the workers start
            os.kill(os.getpid(), signal.SIGTERM)

    def poll(self):
        return self.returncode

    def send_signal(self, sig) -> None:
        self.returncode = 0


def test_workers_share_one_state_secret_and_a_sigterm_while_they_start_stops_the_started(monkeypatch) -> None:
    # Before: each worker sealed request state with its own random key (a follow-up reaching another worker
    # was refused), and SIGTERM before the handler was installed ended the parent alone, workers orphaned.
    from hexmcp.app.start import workers

    _Child.started = []
    monkeypatch.setattr(workers.subprocess, "Popen", _Child)
    monkeypatch.delenv("HEXMCP_STATE_SECRET", raising=False)
    unhandled: list[int] = []  # on the old code the default action would have ended pytest itself
    previous = signal.signal(signal.SIGTERM, lambda sig, frame: unhandled.append(sig))
    try:
        status = workers.supervise("127.0.0.1", 0, 5, ["serve"])
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert status == ExitCode.OK and not unhandled
    assert len(_Child.started) == 2 and all(child.returncode == 0 for child in _Child.started)
    secrets = {child.env["HEXMCP_STATE_SECRET"] for child in _Child.started}
    assert len(secrets) == 1 and len(secrets.pop()) == 64


def test_sigterm_while_index_runs_keeps_the_finished_documents_and_says_so(tmp_path) -> None:
    # Before: SIGTERM's default action killed `hexmcp index` (status -15) with nothing said; Ctrl-C already
    # ended it with this line. A fresh cache, so there is indexing to interrupt.
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for number in range(60):
        (corpus / f"page{number}.md").write_text(f"# Page {number}\n\n" + "Words about routing. " * 400,
                                                 encoding="utf-8")
    indexing = subprocess.Popen([sys.executable, "-m", "hexmcp.app.cli", "index", str(corpus)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "CI": "true", "HEXMCP_CACHE_DIR": str(tmp_path / "cache")})
    seen = b""
    try:
        while b"indexing:" not in seen:  # the first progress line: the model is loaded, passages are embedding
            chunk = os.read(indexing.stderr.fileno(), 4096)
            assert chunk, seen.decode()[-800:]
            seen += chunk
        indexing.send_signal(signal.SIGTERM)
        out, err = indexing.communicate(timeout=30)
    finally:
        if indexing.poll() is None:
            indexing.kill()
    assert indexing.returncode == 128 + signal.SIGTERM and out == b"", (indexing.returncode, err.decode()[-800:])
    assert (seen + err).decode().strip().splitlines()[-1] == (
        "hexmcp index: interrupted; finished documents are saved, run it again to resume")
