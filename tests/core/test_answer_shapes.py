"""`answer_problem`: the one judgement of a client's answer to the server's question, on every path."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hexmcp.core.answers import ELICIT_ACTIONS, answer_problem
from tests.fixtures.demo_server import ELICIT_SCHEMA

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=8)
ASK = {"message": "What is your name?", "requestedSchema": ELICIT_SCHEMA}


@settings(max_examples=300, deadline=None)
@given(action=st.one_of(st.sampled_from(ELICIT_ACTIONS), JSON), content=JSON)
def test_an_elicitation_answer_passes_only_with_a_known_action_and_content_matching_the_schema(action, content) -> None:
    problem = answer_problem("elicitation", ASK, {"action": action, "content": content})
    content_object = isinstance(content, dict) or content is None
    if action not in ELICIT_ACTIONS or not content_object:
        assert problem is not None
    elif action == "accept":
        assert (problem is None) == (isinstance(content, dict) and isinstance(content.get("name"), str))
    else:
        assert problem is None  # declined or cancelled: content is not the tool's concern


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["sampling", "roots", "elicitation"]), answer=JSON)
def test_any_json_gets_a_verdict_never_an_exception(kind, answer) -> None:
    problem = answer_problem(kind, ASK, answer)
    assert problem is None or (isinstance(problem, str) and len(problem) < 2000)
    if not isinstance(answer, dict):
        assert problem is not None


def test_a_tool_schema_that_is_not_json_schema_holds_the_client_to_nothing() -> None:
    assert answer_problem("elicitation", {"requestedSchema": {"type": 5}}, {"action": "accept", "content": {}}) is None
