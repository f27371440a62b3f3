"""JSON-RPC batches (2025-03-26) are capped in length and each request in one takes a concurrency slot (issue 30).

Before: a batch's requests all ran at once on the POST's single slot, however many there were, so one POST
of 1,000 entries ran 1,000 things under a cap of 256. Now a batch longer than `max_batch_messages` is
refused whole (400, -32600), and within a batch each request beyond the first takes a slot of the shared
cap or is answered -32005 (busy) with its own id; the others are answered as ever.
"""

from __future__ import annotations

import time

import pytest

from hexmcp.core import versions
from tests.adapters.http_live import live_server
from tests.adapters.http_wire import Wire
from tests.fixtures.demo_server import build_demo_server
from tests.support.holding_tool import Gauge, add_hold_tool

pytestmark = pytest.mark.timeout(60)

CAP = 4
BATCH = 8


GAUGE = Gauge()


def _server():
    return add_hold_tool(build_demo_server(), GAUGE)


@pytest.fixture(scope="module")
def live():
    with live_server(_server(), max_concurrent_requests=CAP, max_batch_messages=BATCH) as server:
        yield server


def _batch_client(live) -> Wire:
    wire = Wire(live.base)
    wire.initialize(versions.V2025_03_26)
    return wire


def _pings(count: int) -> list[dict]:
    return [{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(1, count + 1)]


def test_a_batch_longer_than_the_cap_is_refused_whole(wire, live) -> None:
    wire.initialize(versions.V2025_03_26)
    response = wire.post(_pings(BATCH + 1), version=versions.V2025_03_26)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32600 and f"at most {BATCH}" in error["message"]
    response = wire.post(_pings(BATCH), version=versions.V2025_03_26)  # at the cap: every one answered
    assert response.status_code == 200 and sorted(m["id"] for m in response.json()) == list(range(1, BATCH + 1))


def test_a_batch_runs_no_more_requests_at_once_than_the_concurrency_cap(live) -> None:
    wire = _batch_client(live)
    GAUGE.peak = 0
    batch = [{"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "hold", "arguments": {"seconds": 0.5}}}
             for n in range(1, BATCH + 1)]
    response = wire.post(batch, version=versions.V2025_03_26)
    assert response.status_code == 200
    answers = {m["id"]: m for m in response.json()}
    assert sorted(answers) == list(range(1, BATCH + 1))  # every request answered, with its own id
    served = [n for n, m in answers.items() if "result" in m]
    busy = [n for n, m in answers.items() if "error" in m]
    assert len(served) == CAP and all(answers[n]["result"]["content"][0]["text"] == "held" for n in served)
    assert all(answers[n]["error"]["code"] == -32005 for n in busy) and len(busy) == BATCH - CAP
    assert GAUGE.peak == CAP
    for _ in range(100):  # the POST's own slot is given back just after its answer is sent
        if live.app.limit.in_flight == 0:
            break
        time.sleep(0.02)
    assert live.app.limit.in_flight == 0  # every slot the batch took is back
    response, [answer] = wire.request("ping", version=versions.V2025_03_26)
    assert response.status_code == 200 and answer["result"] == {}
    wire.close()
