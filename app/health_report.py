"""What `hexmcp serve` adds to /health: each component's state, and whether its start-up work is over.

`status: "ok"` (readiness) needs the classifier alone: the knowledge index and the concepts are served
as far as they are built. But the process keeps both cores busy for seconds after that, extracting
concepts and embedding the corpus, and anything measured meanwhile measures that contention (a
benchmark's first rounds did: p99 115 ms instead of 8). `warm` says when every component present has
finished its start-up work, so a benchmark, a load test or an operator can wait for steady state.
"""

from __future__ import annotations

from typing import Any, Callable

Describe = Callable[[], dict[str, Any]]


def health_report(*, classifier: Describe | None, knowledge: Describe | None, concepts: Describe | None,
                  gateway: Describe) -> Describe:
    """The composition root's `health()`: the classifier's fields at the top level (as before), one
    block each for knowledge, concepts and the gateway, and `warm`: true once the classifier is ready,
    the knowledge index complete and the concepts built, each counted only when the server has it. A
    knowledge build that could not reach its vector store is not warm (it retries on the next search)."""
    def report() -> dict[str, Any]:
        details = dict(classifier()) if classifier is not None else {}
        settled = [bool(details.get("ready"))] if classifier is not None else []
        if knowledge is not None:
            details["knowledge"] = knowledge()
            settled.append(bool(details["knowledge"].get("complete")))
        if concepts is not None:
            details["concepts"] = concepts()
            settled.append(bool(details["concepts"].get("ready")))
        details["gateway"] = gateway()
        details["warm"] = all(settled)
        return details

    return report
