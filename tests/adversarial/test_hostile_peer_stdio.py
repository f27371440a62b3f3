"""A client that answers the server's sampling, elicitation and roots requests badly, over stdio.

Each bad answer ends the tool call with an error that says what was wrong (never an opaque crash, never the
tool acting on it), the pending request is freed, the session goes on serving, and stray answers are logged
with their id. The same connection code (`RpcConnection`) serves WebSocket.
"""

from __future__ import annotations

import pytest

from .peer_stdio import StdioPeer, tool_text

ALL = {"elicitation": {}, "sampling": {}, "roots": {}}

BAD_ANSWERS = [
    ("ask_name", {"action": "maybe"}, "action is 'maybe'"),
    ("ask_name", {"action": "accept"}, "content at $: 'name' is a required property"),
    ("ask_name", {"action": "accept", "content": {"name": 5}}, "content at $.name: 5 is not of type 'string'"),
    ("ask_name", {"action": "accept", "content": [1]}, "content is an array"),
    ("ask_name", "accept", "the client's result is not an object"),
    ("sample_once", {"role": "assistant", "model": "m"}, "content is missing"),
    ("sample_once", {"role": "robot", "content": {"type": "text", "text": "x"}}, "role is 'robot'"),
    ("sample_once", {"role": "assistant", "content": "text"}, "content is a string"),
    ("roots_once", {}, "roots is missing"),
    ("roots_once", {"roots": [{"name": "no uri"}]}, "roots[0] has no uri string"),
]


@pytest.mark.parametrize(("tool", "result", "expected"), BAD_ANSWERS)
def test_an_answer_of_the_wrong_shape_ends_the_call_with_what_is_wrong(tool, result, expected) -> None:
    peer = StdioPeer(ALL)
    question = peer.call(tool)
    peer.send({"jsonrpc": "2.0", "id": question["id"], "result": result})
    answer = peer.read()
    assert answer["id"] == 1 and answer["result"]["isError"] is True
    assert expected in tool_text(answer)
    assert peer.ping()
    peer.finish()


def test_good_answers_still_reach_the_tools() -> None:
    peer = StdioPeer(ALL)
    for tool, result, expected in [
        ("ask_name", {"action": "accept", "content": {"name": "Ada"}}, "Hello, Ada!"),
        ("ask_name", {"action": "decline"}, "no name given"),
        ("sample_once", {"role": "assistant", "model": "m", "content": {"type": "text", "text": "x"}}, '"model": "m"'),
        ("roots_once", {"roots": [{"uri": "file:///tmp"}]}, "file:///tmp"),
    ]:
        question = peer.call(tool)
        peer.send({"jsonrpc": "2.0", "id": question["id"], "result": result})
        answer = peer.read()
        assert "isError" not in answer["result"] and expected in tool_text(answer)
    peer.finish()


def test_an_error_answer_of_odd_types_or_huge_size_is_bounded() -> None:
    peer = StdioPeer(ALL)
    for request_id, error in enumerate([{"code": "x", "message": {"a": 1}}, "boom", None,
                                        {"code": 1, "message": "m" * 200_000, "data": "d" * 100_000}], start=1):
        question = peer.call("ask_name", request_id)
        peer.send({"jsonrpc": "2.0", "id": question["id"], "error": error})
        answer = peer.read()
        assert answer["id"] == request_id and answer["result"]["isError"] is True
        assert "could not answer the elicitation request" in tool_text(answer) and len(tool_text(answer)) <= 8300
    assert peer.ping()
    peer.finish()


def test_no_answer_ends_the_call_after_the_deadline_and_a_late_answer_is_logged_with_its_id() -> None:
    peer = StdioPeer(ALL, peer_timeout_s=1)
    question = peer.call("ask_name")
    answer = peer.read(timeout_s=10)
    assert "no answer to elicitation/create within 1 s" in tool_text(answer)
    peer.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}})  # late: dropped
    assert peer.ping()
    logs = peer.finish()
    stray = [line for line in logs if line["event"] == "response to an unknown request ignored"]
    assert [line["responseId"] for line in stray] == [question["id"]] and stray[0]["sessionId"]


def test_unknown_and_duplicate_answers_are_dropped_and_logged() -> None:
    peer = StdioPeer(ALL)
    question = peer.call("ask_name")
    peer.send({"jsonrpc": "2.0", "id": "s-999", "result": {"action": "accept", "content": {"name": "Eve"}}})
    peer.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}})
    assert tool_text(peer.read()) == "no name given"
    peer.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"name": "Eve"}}})
    assert peer.ping()
    stray = [line["responseId"] for line in peer.finish() if line["event"] == "response to an unknown request ignored"]
    assert stray == ["s-999", question["id"]]


def test_an_answer_after_the_call_was_cancelled_is_dropped() -> None:
    peer = StdioPeer(ALL)
    question = peer.call("ask_name", 7)
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
    peer.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}})
    assert peer.ping()  # nothing answers request 7: the ping's answer comes first
    stray = [line["responseId"] for line in peer.finish() if line["event"] == "response to an unknown request ignored"]
    assert stray == [question["id"]]


@pytest.mark.parametrize(("tool", "capability"), [("ask_name", "elicitation"), ("sample_once", "sampling"),
                                                  ("roots_once", "roots")])
def test_a_client_without_the_capability_is_never_asked(tool, capability) -> None:
    peer = StdioPeer({})
    answer = peer.read(0) or peer.call(tool)  # the answer itself, not a request to the client
    assert answer["id"] == 1 and f"no '{capability}' capability declared" in tool_text(answer)
    peer.finish()


def test_a_client_that_leaves_mid_question_ends_the_call() -> None:
    peer = StdioPeer(ALL)
    peer.call("ask_name")
    assert peer.process.stdin is not None
    peer.process.stdin.close()
    answer = peer.read()
    assert "the client closed its input" in tool_text(answer)
    assert peer.process.wait(timeout=30) == 0


def test_thousands_of_unanswered_questions_stay_bounded_by_the_in_flight_limit() -> None:
    peer = StdioPeer(ALL)
    for request_id in range(1, 701):
        peer.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": "ask_name", "arguments": {}}})
    messages = [peer.read() for _ in range(700)]
    questions = [m for m in messages if m.get("method") == "elicitation/create"]
    busy = [m for m in messages if "error" in m]
    assert len(questions) == 512 and len(busy) == 188  # RpcConnection's max_in_flight: one pending question each
    assert len({m["id"] for m in questions}) == 512
    assert peer.process.stdin is not None
    peer.process.stdin.close()  # every pending question fails, every call is answered
    ended = [peer.read() for _ in range(512)]
    assert all("the client closed its input" in tool_text(m) for m in ended)
    assert peer.process.wait(timeout=30) == 0
