"""What fair share and the idle timeout cost (ADR 1214): per connection opened, per admission at a full
server, per idle sweep, and per SSE event; none of it runs per request.

    python -m bench.held_open_cost            # medians of 7 rounds, each the mean over many operations
    python -m bench.held_open_cost --rounds 15

Measured in this process, interleaved in each round so drift hits every row alike:
- `take+give, no holder`: a place taken and given back as before ADR 1214 (the reference);
- `take+give, holder`: the same with a holder (what a socket or stream now does at open and close);
- `admission at a full server`: 1,024 places held by 8 clients, a 9th admitted by closing the largest
  holder's oldest idle place (only when the server is full; once per connection opened then);
- `idle sweep of 1,024 places`: one pass of the timer (4 per timeout, 30 min by default);
- `SSE frame`: `EventStream._frame` of a small event (one integer counted per event now).
Prints medians (µs) and each row's ratio to the reference. Log lines are switched off: the one warning an
eviction writes is the logger's cost, not the ledger's.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import time
from typing import Any, Callable

import structlog

from hexmcp.adapters.held_open import HeldOpen
from hexmcp.adapters.http.sse import EventStream


class _Place:
    session_id = "s"

    def idle(self) -> bool:
        return True

    def activity(self) -> int:
        return 0

    def let_go(self, reason: str, *, idle: bool) -> None:
        pass


def _per_op(work: Callable[[], Any], n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        work()
    return (time.perf_counter() - started) / n * 1e6


def _ledger(timeout: float | None = None) -> HeldOpen:
    return HeldOpen(what="things", per_client=128, total=1024, idle_timeout_s=timeout)


def _full(clients: int = 8) -> tuple[HeldOpen, list[_Place]]:
    ledger = _ledger()
    places = []
    for client in range(clients):
        for _ in range(1024 // clients):
            place = _Place()
            ledger.take(client, place)
            places.append(place)
    return ledger, places


async def _round(n: int) -> dict[str, float]:
    plain, held = _ledger(), _ledger(1800.0)
    for client in range(8):  # other clients hold places, as on a busy server
        for _ in range(64):
            plain.take(client)
            held.take(client, _Place())
    place = _Place()

    def take_plain() -> None:
        plain.take("me")
        plain.give("me")

    def take_held() -> None:
        held.take("me", place)
        held.give("me", place)

    full_rounds = max(1, n // 200)
    admissions = []
    for _ in range(full_rounds):
        ledger, _ = _full()
        started = time.perf_counter()
        ledger.take("newcomer", _Place())
        admissions.append((time.perf_counter() - started) * 1e6)
    sweeping, _ = _full()
    sweeping.idle_timeout_s = 1800.0
    stream = EventStream("1", replay=0)
    return {"take+give, no holder": _per_op(take_plain, n), "take+give, holder": _per_op(take_held, n),
            "admission at a full server": statistics.fmean(admissions),
            "idle sweep of 1,024 places": _per_op(lambda: sweeping.sweep(time.monotonic()), max(1, n // 1000)),
            "SSE frame": _per_op(lambda: stream._frame(b'{"jsonrpc":"2.0","method":"x"}'), n)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ops", type=int, default=100_000, help="operations per row per round")
    args = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
    rounds = [asyncio.run(_round(args.ops)) for _ in range(args.rounds)]
    reference = statistics.median(r["take+give, no holder"] for r in rounds)
    print(f"{'row':32} {'median µs':>10} {'x reference':>12}")
    for row in rounds[0]:
        value = statistics.median(r[row] for r in rounds)
        print(f"{row:32} {value:10.3f} {value / reference:12.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
