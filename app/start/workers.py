"""`hexmcp serve --workers N`: N server processes accepting connections on one listening socket.

The parent binds the port, starts N copies of the same `hexmcp serve` command line, each handed the
socket's descriptor (`HEXMCP_LISTEN_FD`), and closes its own copy: it never accepts. Every worker waits
on the same accept queue and the kernel hands each new connection to one of them. The parent only
supervises: SIGTERM or SIGINT is passed on to every worker (each drains as a single server does) and
the parent exits 0 once all have exited 0. A worker that exits on its own (a bad flag, a model that
will not load, a crash) stops the others and the parent exits with that worker's status, so an
orchestrator restarts the whole instance rather than running it short of a worker. Why one inherited
socket rather than uvicorn's supervisor or SO_REUSEPORT: docs/adr/0931-scaling-out.md.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from typing import Sequence

import structlog

from hexmcp.core.startup import ExitCode

log = structlog.get_logger("hexmcp.app.start.workers")

LISTEN_FD_ENV = "HEXMCP_LISTEN_FD"
"""Set by the parent for its workers: the listening socket's descriptor, inherited."""
WORKER_INDEX_ENV = "HEXMCP_WORKER_INDEX"
"""Set by the parent for its workers: 0..N-1, for the logs."""
TOKEN_ENV = "HEXMCP_AUTH_TOKEN"
TOKEN_FILE_ENV = "HEXMCP_AUTH_TOKEN_FILE"
STATE_SECRET_ENV = "HEXMCP_STATE_SECRET"
_TOKEN_FLAGS = ("--auth-token", "--auth-token-file")
_SHORTEST_TOKEN_PREFIX = len("--aut")  # argparse takes unique prefixes; "--au" would also name --audit-*
ACCEPT_BACKLOG = 2048  # uvicorn's default
POLL_S = 0.1


def inherited_listener() -> socket.socket | None:
    """The listening socket a supervising parent handed this worker, or None when serving alone."""
    fd = os.environ.get(LISTEN_FD_ENV)
    return socket.socket(fileno=int(fd)) if fd else None


def is_worker() -> bool:
    return LISTEN_FD_ENV in os.environ


def is_first_worker() -> bool:
    return os.environ.get(WORKER_INDEX_ENV) == "0"


def supervise(host: str, port: int, workers: int, argv: Sequence[str], *, auth_token: str | None = None) -> int:
    """Bind `host:port`, run `workers` copies of `hexmcp <argv>` on it, return the exit status. The settled
    `auth_token` reaches them in their environment, never on their command line (where ps shows it)."""
    try:
        listener = socket.create_server((host, port), backlog=ACCEPT_BACKLOG)
    except OSError as error:
        print(f"hexmcp serve: cannot listen on {host}:{port}: {error.strerror}", file=sys.stderr, flush=True)
        return ExitCode.USAGE
    listener.set_inheritable(True)
    env = {**os.environ, LISTEN_FD_ENV: str(listener.fileno())}
    env.pop(TOKEN_FILE_ENV, None)
    if auth_token:
        env[TOKEN_ENV] = auth_token
    if not env.get(STATE_SECRET_ENV):  # else each worker seals request state with a key the others refuse
        env[STATE_SECRET_ENV] = secrets.token_hex(32)
    argv = without_token_flags(argv)
    stop_requested: list[int] = []

    def on_signal(sig: int, frame: object) -> None:
        stop_requested.append(sig)

    # Before the first worker starts: a SIGTERM while they start would otherwise end this parent alone
    # and leave the started workers serving, orphaned; now it stops the starting and them.
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        children: list[subprocess.Popen[bytes]] = []
        for index in range(workers):
            if stop_requested:
                break
            children.append(subprocess.Popen([sys.executable, "-m", "hexmcp.app.cli", *argv],
                                             env={**env, WORKER_INDEX_ENV: str(index)}, pass_fds=(listener.fileno(),)))
        listener.close()  # only the workers hold it now: once they all close it, new connections are refused
        log.info("workers started", workers=len(children), pids=[child.pid for child in children])
        return _watch(children, stop_requested)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def without_token_flags(argv: Sequence[str]) -> list[str]:
    """`argv` less `--auth-token[-file] VALUE` (and `=VALUE` forms, and argparse's unique prefixes of them):
    the parent has settled the token, and hands it on in the environment."""
    kept: list[str] = []
    words = iter(argv)
    for word in words:
        name, joined, _ = word.partition("=")
        if len(name) >= _SHORTEST_TOKEN_PREFIX and any(flag.startswith(name) for flag in _TOKEN_FLAGS):
            if not joined:
                next(words, None)
            continue
        kept.append(word)
    return kept


def _watch(children: list[subprocess.Popen[bytes]], stop_requested: list[int]) -> int:
    """Wait for every worker; a signal or the first worker to exit unasked stops all of them."""
    status: int = ExitCode.OK
    stopping = False
    while any(child.poll() is None for child in children):
        ended = next((child for child in children if child.returncode is not None), None)
        if not stopping and (stop_requested or ended is not None):
            stopping = True
            if stop_requested:
                log.info("stopping workers", signal=signal.Signals(stop_requested[0]).name)
            else:
                assert ended is not None
                status = ended.returncode or ExitCode.FAILED_AFTER_START  # a server never ends by itself
                log.error("a worker exited; stopping the others", pid=ended.pid, status=ended.returncode)
            _terminate(children)
        time.sleep(POLL_S)
    if status == ExitCode.OK:
        status = next((child.returncode for child in children if child.returncode != 0), ExitCode.OK)
    return ExitCode.FAILED_AFTER_START if status < 0 else status  # a worker killed by a signal


def _terminate(children: list[subprocess.Popen[bytes]]) -> None:
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
