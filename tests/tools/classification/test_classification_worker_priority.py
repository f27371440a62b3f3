"""The inference workers run a few nice steps below the event loop (docs/adr/0112), and only they do."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

import attrs
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.app.cli import parse_args
from hexmcp.tools.classification.flags import classification_config as _classification_config
from hexmcp.tools.classification import ClassificationConfig
from hexmcp.tools.embedding.inference_pool import InferencePool
from hexmcp.tools.embedding.thread_priority import MAX_NICENESS, lower_current_thread
from tests.support.serve_process import serve_process

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")


def own_niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def in_new_thread(function):
    """Runs `function` on a fresh thread (niceness only goes up without privilege) and returns its result."""
    result = []
    thread = threading.Thread(target=lambda: result.append(function()))
    thread.start()
    thread.join()
    return result[0]


@settings(max_examples=30, deadline=None)
@given(increment=st.integers(min_value=0, max_value=40))
def test_lowering_adds_the_increment_up_to_the_lowest_priority(increment):
    base = own_niceness()
    change, seen = in_new_thread(lambda: (lower_current_thread(increment), own_niceness()))
    if increment == 0:
        assert change.skipped and seen == base
    else:
        assert (change.before, change.after, change.skipped) == (base, min(MAX_NICENESS, base + increment), None)
        assert seen == change.after
    assert own_niceness() == base  # the caller's thread is never touched


def test_a_refused_call_is_reported_and_the_thread_runs_on(monkeypatch):
    def refuse(*_args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "setpriority", refuse)
    change = in_new_thread(lambda: lower_current_thread(5))
    assert change.after is None and "Operation not permitted" in change.skipped


@pytest.mark.parametrize("increment", [0, 3])
def test_pool_workers_run_below_the_loop_that_submits(increment):
    pool = InferencePool(lambda _item: own_niceness(), workers=2, max_queue=8, timeout=5, nice_increment=increment)
    try:
        async def main():
            return await asyncio.gather(*(pool.submit(str(i)) for i in range(8))), own_niceness()

        seen, loop_niceness = asyncio.run(main())
    finally:
        pool.close()
    assert set(seen) == {min(MAX_NICENESS, own_niceness() + increment)}
    assert loop_niceness == own_niceness()


def test_pool_answers_when_the_priority_cannot_change(monkeypatch):
    monkeypatch.setattr(os, "setpriority", lambda *_args: (_ for _ in ()).throw(PermissionError(1, "refused")))
    pool = InferencePool(str.upper, workers=1, max_queue=4, timeout=5, nice_increment=10)
    try:
        assert asyncio.run(pool.submit("still answered")) == "STILL ANSWERED"
    finally:
        pool.close()


@pytest.mark.parametrize("increment", [-1, 20, 2.5])
def test_config_refuses_an_increment_outside_0_to_19(increment):
    with pytest.raises((ValueError, TypeError)):
        ClassificationConfig(worker_nice_increment=increment)


def test_flag_and_its_variable_reach_the_config(monkeypatch):
    default = attrs.fields(ClassificationConfig).worker_nice_increment.default
    assert _classification_config(parse_args(["serve"])).worker_nice_increment == default
    assert _classification_config(parse_args(["serve", "--classifier-nice", "0"])).worker_nice_increment == 0
    monkeypatch.setenv("HEXMCP_CLASSIFIER_NICE", "4")
    assert _classification_config(parse_args(["stdio"])).worker_nice_increment == 4
    with pytest.raises(SystemExit) as exited:
        parse_args(["serve", "--classifier-nice", "20"])
    assert exited.value.code == 2


def thread_niceness(pid: int) -> dict[int, int]:
    """tid -> niceness, from /proc (field 19 of stat, counted after the command name's closing parenthesis)."""
    found = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        found[int(tid)] = int(fields[16])
    return found


def test_a_served_classifier_lowers_its_workers_alone():
    with serve_process("--no-knowledge", env={"HEXMCP_CLASSIFIER_NICE": "7"}) as served:
        health = served.health().json()
        assert health["worker_nice_increment"] == 7
        answer = httpx.post(f"{served.base}/mcp/tools/call", timeout=30,
                            json={"name": "classify_text", "arguments": {"text": "What is 5 + 3?"}})
        assert answer.status_code == 200 and not answer.json().get("isError")
        niceness = thread_niceness(served.process.pid)
        base = niceness[served.process.pid]  # the event loop's thread
        # The workers, and the threads native libraries start from them (the tokenizer's pool), are 7
        # steps down; everything else (the loop, its executors, uvloop's) is where the process started.
        lowered = [n for n in niceness.values() if n != base]
        assert set(lowered) == {base + 7} and len(lowered) >= health["workers"]
        assert len(niceness) - len(lowered) >= 2
