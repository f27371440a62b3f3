"""Invariant 5: the lifecycle, as a stateful test on a fresh connection per example.

The model is hexmcp's lifecycle table (core/lifecycle.py, the spec's rules in one place): what each
state does with initialize, initialized, ping, other requests and other notifications. Rules send
those in any order, start slow calls (when the server has a tool with a `seconds` number, as the demo's
`slow`), cancel them, and keep requests in flight; the teardown ends the session and checks that every
request not cancelled was answered exactly once before the server let go (stdio: stdin closed, then
EOF), that cancelled ones got at most one answer (none on hexmcp), and that nothing else came back.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from hexmcp.wire.jsonrpc import INVALID_REQUEST
from hexmcp.core import versions
from hexmcp.core.lifecycle import Event, State, Verdict, step

from ..support.peer import initialize_params
from .deadlines import hung
from .drivers import Closed, StdioDriver
from .drivers.base import is_response, key
from .profiles import budget
from .targets import Target

SLOW_SECONDS = 0.4


def slow_tool(tools: list[dict[str, Any]]) -> str | None:
    for tool in tools:
        properties = (tool.get("inputSchema") or {}).get("properties") or {}
        if properties.get("seconds", {}).get("type") == "number":
            return tool["name"]
    return None


def machine_for(target: Target) -> type[RuleBasedStateMachine]:
    slow = slow_tool(target.tools())

    class Lifecycle(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.driver = target.fresh()
            self.state = State.AWAITING_INITIALIZE
            self.expected: dict[Any, Any] = {}  # key → Verdict.ACCEPT / REJECT, for requests awaiting an answer
            self.answers: dict[Any, list[dict]] = {}
            self.cancelled: set[Any] = set()
            self.started: dict[Any, float] = {}

        # --- helpers ---------------------------------------------------------------------------

        def pump(self, until: Any = None, timeout: float = 10.0) -> None:
            deadline = time.monotonic() + timeout
            while until is None or until not in self.answers:
                message = self.driver.receive(0.02 if until is None else max(0.0, deadline - time.monotonic()))
                if message is None:
                    if until is not None and time.monotonic() >= deadline:
                        raise hung(f"{self.driver.name}: no answer to {until[1]!r} within {timeout:g} s "
                                   f"(state {self.state.value})", self.driver.log)
                    if until is not None and not self.driver.answers_come_with_requests:
                        continue
                    if until is not None:
                        raise AssertionError(f"no answer to {until} (state {self.state.value})")
                    return
                if is_response(message):
                    self.answers.setdefault(key(message.get("id")), []).append(message)

        def ask(self, method: str, params: Any, event: Event, *, wait: bool = True) -> Any:
            verdict, after = step(self.state, event)
            request_id = self.driver.next_id()
            message = {"jsonrpc": "2.0", "id": request_id, "method": method}
            if params is not None:
                message["params"] = params
            self.driver.send(message)
            self.expected[key(request_id)] = verdict
            self.state = after
            if wait:
                self.pump(key(request_id))
                self.judge(key(request_id))
            return request_id

        def judge(self, k: Any) -> None:
            answer = self.answers[k][0]
            if self.expected[k] is Verdict.ACCEPT:
                assert "result" in answer, f"expected a result, got {answer}"
            else:
                assert "error" in answer, f"expected an error (lifecycle: rejected), got {answer}"
                if target.hexmcp:
                    assert answer["error"]["code"] == INVALID_REQUEST, answer

        def has_transport_session(self) -> bool:
            # Streamable HTTP refuses everything but `initialize` without an Mcp-Session-Id, at the HTTP level
            # (400): the session lifecycle only starts once initialize minted one.
            return getattr(self.driver, "session_id", True) is not None

        # --- rules -----------------------------------------------------------------------------

        @rule(version=st.sampled_from(versions.HANDSHAKE_VERSIONS))
        def initialize(self, version: str) -> None:
            request_id = self.ask("initialize", initialize_params(version), Event.INITIALIZE)
            answer = self.answers[key(request_id)][0]
            if "result" in answer:
                assert answer["result"]["protocolVersion"] in versions.SUPPORTED_VERSIONS, answer
                self.driver.transcript.version = answer["result"]["protocolVersion"]

        @precondition(has_transport_session)
        @rule()
        def initialized(self) -> None:
            self.driver.notify("notifications/initialized")
            self.state = step(self.state, Event.INITIALIZED)[1]

        @precondition(has_transport_session)
        @rule()
        def ping(self) -> None:
            self.ask("ping", None, Event.PING)

        @precondition(has_transport_session)
        @rule()
        def list_tools(self) -> None:
            self.ask("tools/list", {}, Event.REQUEST)

        @precondition(has_transport_session)
        @rule()
        def list_tools_without_waiting(self) -> None:
            """Left in flight: if the session ends next, its answer must still come before the server lets go."""
            self.ask("tools/list", {}, Event.REQUEST, wait=False)

        @precondition(has_transport_session)
        @rule()
        def unrelated_notification(self) -> None:
            self.driver.notify("notifications/roots/list_changed")
            self.state = step(self.state, Event.NOTIFICATION)[1]

        # Only where the call is admitted: a rejected one is answered at once, with nothing left to cancel.
        @precondition(lambda self: slow is not None and step(self.state, Event.REQUEST)[0] is Verdict.ACCEPT)
        @rule()
        def start_slow_call(self) -> None:
            request_id = self.ask("tools/call", {"name": slow, "arguments": {"seconds": SLOW_SECONDS}}, Event.REQUEST,
                                  wait=False)
            self.started[key(request_id)] = time.monotonic()

        @precondition(lambda self: any(k not in self.answers and k not in self.cancelled for k in self.started))
        @rule(data=st.data())
        def cancel_in_flight(self, data: st.DataObject) -> None:
            running = sorted((k for k in self.started if k not in self.answers and k not in self.cancelled), key=str)
            k = data.draw(st.sampled_from(running))
            self.driver.notify("notifications/cancelled", {"requestId": k[1], "reason": "changed my mind"})
            self.cancelled.add(k)

        @invariant()
        def nothing_answered_twice_or_unasked(self) -> None:
            self.pump()
            for k, found in self.answers.items():
                assert k in self.expected, f"an answer to a request never sent: {found}"
                assert len(found) == 1 or k in self.cancelled and len(found) <= 1, f"answered twice: {found}"

        def teardown(self) -> None:
            try:
                self.end_session()
            finally:
                self.driver.close()

        def end_session(self) -> None:
            if isinstance(self.driver, StdioDriver):
                self.driver.end_input()  # in-flight requests must still be answered before EOF
                try:
                    self.pump(None, 0)
                    deadline = time.monotonic() + 10
                    while time.monotonic() < deadline:
                        self.pump()
                except Closed:
                    pass
            else:
                wait_until = max(self.started.values(), default=0) + SLOW_SECONDS + 0.3
                while time.monotonic() < wait_until:
                    self.pump()
            for k, verdict in self.expected.items():
                if k in self.cancelled:
                    if target.hexmcp and time.monotonic() - self.started[k] > SLOW_SECONDS:
                        assert k not in self.answers, f"a cancelled request was answered: {self.answers[k]}"
                    continue
                assert k in self.answers, f"request {k[1]} was never answered before the session ended " \
                                          f"(state {self.state.value})"
                self.judge(k)

    return Lifecycle


def test_lifecycle_rules_hold_in_any_order(target: Target) -> None:
    run_state_machine_as_test(machine_for(target), settings=budget(12, stateful_step_count=8))


@budget(10)
@given(data=st.data())
def test_a_request_before_initialize_is_rejected_even_when_initialize_follows_at_once(
        target: Target, data: st.DataObject) -> None:
    """Requests are judged in arrival order: one sent before `initialize` is rejected, however soon
    `initialize` follows (stdio: both lines in one write, so the server reads them together)."""
    driver = target.fresh()
    if not driver.framing:
        driver.close()
        pytest.skip("needs a byte stream to put both messages in one read")
    try:
        assert driver.request("ping") is not None, "the server did not answer ping"
        method = data.draw(st.sampled_from(["tools/list", "prompts/list", "resources/list"]), label="method")
        early = {"jsonrpc": "2.0", "id": "early", "method": method, "params": {}}
        init = {"jsonrpc": "2.0", "id": "init", "method": "initialize",
                "params": initialize_params(versions.LATEST_HANDSHAKE_VERSION)}
        for message in (early, init):
            driver.transcript.sent(message)
        driver.raw(b"".join(json.dumps(m).encode() + b"\n" for m in (early, init)))
        answers, _ = driver.collect({key("early"), key("init")}, timeout=10)
        assert key("early") in answers, "the early request was never answered"
        assert "error" in answers[key("early")][0], f"{method} sent before initialize was served: " \
                                                     f"{answers[key('early')][0]}"
    finally:
        driver.close()
