"""Slow request heads from one address do not lock other clients out (`hexmcp serve` in a subprocess).

The server starts under a soft open-files limit of 1,024 (the hard limit above it, as on most hosts),
1,200 connections from 127.0.0.1 trickle a request head that never completes, and a client bound to
127.0.0.2 (also loopback on Linux) asks for /health meanwhile. Without the caps and the head deadline
the slow sockets take every descriptor and /health fails until they go away.
"""

from __future__ import annotations

import asyncio
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import attrs
import httpx
import pytest

from hexmcp.adapters.http import HttpConfig
from hexmcp.adapters.http.admission import REFUSAL_STATUS
from hexmcp.adapters.http.descriptors import connection_cap

from ..support.net import free_port
from ..support.slow_clients import SlowHead, open_slow_heads

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

HEAD_TIMEOUT_S = 2.0
SLACK_S = 3.0
"""Beyond the head deadline, for a 2-core machine shared with other test runs."""
OTHER_CLIENT = "127.0.0.2"


@attrs.frozen(kw_only=True)
class Plan:
    server_soft: int
    """The soft limit the server starts under."""
    connections: int
    """Slow connections from one address: more than the server's starting soft limit."""


def _plan() -> Plan:
    """1,024 and 1,200 where the hard limit allows it; else a soft limit below the hard one, scaled."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = sys.maxsize if hard == resource.RLIM_INFINITY else hard
    server_soft = 1024 if ceiling > 1024 else ceiling // 2
    connections = server_soft * 1200 // 1024
    if ceiling < connections + 256:
        pytest.skip(f"the hard open-files limit ({hard}) leaves no room for {connections} test sockets")
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(ceiling, max(soft, connections + 256)), hard))
    return Plan(server_soft=server_soft, connections=connections)


@attrs.frozen(kw_only=True)
class Served:
    port: int
    plan: Plan
    process: subprocess.Popen[bytes]
    log: Path
    """The server's stderr (a file, so a chatty server can never block on a full pipe)."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    plan = _plan()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    port = free_port()
    log = tmp_path_factory.mktemp("slowloris") / "server.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "hexmcp.app.cli", "serve", "--no-classifier", "--port", str(port),
             "--head-timeout", str(HEAD_TIMEOUT_S), "--log-level", "info"],
            stdout=subprocess.DEVNULL, stderr=stderr,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (plan.server_soft, hard)))
    try:
        _wait_for_health(port)
        yield Served(port=port, plan=plan, process=process, log=log)
    finally:
        process.terminate()
        process.wait(timeout=20)


def _wait_for_health(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise RuntimeError("the server did not answer /health")


def _log_records(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


async def _health_from(address: str, port: int) -> tuple[int, float]:
    transport = httpx.AsyncHTTPTransport(local_address=address)
    async with httpx.AsyncClient(transport=transport, timeout=10) as client:
        started = time.perf_counter()
        response = await client.get(f"http://127.0.0.1:{port}/health")
        return response.status_code, time.perf_counter() - started


def test_slow_heads_from_one_address_leave_health_answering_and_are_closed_by_the_deadline(served: Served) -> None:
    port, plan = served.port, served.plan

    async def attack() -> tuple[list[SlowHead], int, float]:
        async with open_slow_heads("127.0.0.1", port, plan.connections) as heads:
            status, latency = await _health_from(OTHER_CLIENT, port)
            await heads.until_all_closed(timeout_s=HEAD_TIMEOUT_S + SLACK_S + 10)
        return heads.heads, status, latency

    heads, status, latency = asyncio.run(attack())
    print(f"\n/health from {OTHER_CLIENT} under {plan.connections} slow connections: {latency * 1000:.1f} ms")
    assert status == 200

    refused = [head for head in heads if head.answer.startswith(f"HTTP/1.1 {REFUSAL_STATUS}".encode())]
    held = [head for head in heads if not head.answer]
    assert len(refused) + len(held) == len(heads), {head.answer[:40] for head in heads}
    assert refused and held
    assert len(held) >= HttpConfig().max_connections_per_address  # the cap admits, then refuses
    assert all(b"retry-after: " in head.answer.lower() and b"connection: close" in head.answer.lower()
               for head in refused)
    late = [head.lifetime_s for head in heads if head.lifetime_s > HEAD_TIMEOUT_S + SLACK_S]
    assert not late, f"{len(late)} slow connections outlived the head deadline: {sorted(late)[-3:]}"
    assert all(head.lifetime_s >= HEAD_TIMEOUT_S * 0.9 for head in held)  # the deadline, not an accident

    # The server raised its soft open-files limit from where it started to the hard limit, said so, and
    # derived its total connection cap from the raised limit.
    records = _log_records(served.log)
    raised = [r for r in records if r.get("event") == "open-files limit"]
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    raised_to = hard if hard != resource.RLIM_INFINITY else 1 << 20  # Linux refuses an infinite soft limit
    assert raised and (raised[0]["soft_before"], raised[0]["soft"], raised[0]["hard"]) == (plan.server_soft, raised_to, hard)
    caps = [r for r in records if r.get("event") == "connection caps"]
    assert caps and caps[0]["total"] == connection_cap(hard) and caps[0]["head_timeout_s"] == HEAD_TIMEOUT_S
