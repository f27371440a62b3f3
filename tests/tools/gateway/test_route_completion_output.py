"""routeCompletion's results are not checked against its output schema on every call (ADR 1206): the
gateway client checks each field of the upstream's answer as it reads it, and the routing's fields are
typed when the taxonomy and the configuration load. These properties are that check, moved to test time:
whatever JSON an upstream answers, plainly or as a stream, the client either refuses it as unusable or
returns an answer from which routeCompletion's result fits the schema the tool declares, and encodes."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexmcp.core import McpServer
from hexmcp.core.json_encoder import dumps
from hexmcp.core.schemas.validation import compile_validator
from hexmcp.tools.gateway.mcp_tools import register_gateway_tools
from hexmcp.tools.gateway.outbound import GatewayConfig
from hexmcp.tools.gateway.outbound.openai_compatible import UNUSABLE_ANSWER, OpenAICompatibleGateway, _answer
from hexmcp.tools.gateway.port import ChatAnswer, GatewayFailure
from hexmcp.tools.gateway.routing_source import CategoryRoute, RouteChoice
from hexmcp.tools.gateway.service import GatewayService, GatewaySettings

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Any JSON value an upstream may send, and values shaped like a chat completion with any JSON in each field.
SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(2 ** 64), max_value=2 ** 64)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                        max_size=3), max_leaves=8)
FIELD = JSON | st.sampled_from(["stop", "length", "qwen3-32b", "12", "1e3", "many", 12, 12.5, 0, ""])
COUNTS = st.fixed_dictionaries({}, optional={"prompt_tokens": FIELD, "completion_tokens": FIELD,
                                             "total_tokens": FIELD})
CHOICE = st.fixed_dictionaries({}, optional={"message": st.fixed_dictionaries({}, optional={"content": FIELD}) | JSON,
                                             "delta": st.fixed_dictionaries({}, optional={"content": FIELD}) | JSON,
                                             "finish_reason": FIELD})
COMPLETION = st.fixed_dictionaries({}, optional={"choices": st.lists(CHOICE, max_size=2) | JSON, "model": FIELD,
                                                 "usage": COUNTS | JSON})
DOCUMENT = COMPLETION | JSON

# The routing side, over the values its loaders accept.
NAMES = st.text(min_size=1, max_size=12)
CATEGORY = st.builds(CategoryRoute, name=NAMES, description=st.text(max_size=12), system_prompt=st.text(max_size=12),
                     model=st.none() | NAMES, use_reasoning=st.sampled_from([True, False, "auto"]),
                     reasoning_effort=st.sampled_from(["low", "medium", "high"]))
DECISION = st.builds(RouteChoice, category=CATEGORY, confidence=st.floats(allow_nan=False), model=NAMES,
                     use_reasoning=st.booleans())


class Routing:
    default_model = "default-model"
    fallback_model = None

    def __init__(self, choice: RouteChoice) -> None:
        self.choice = choice

    async def categories(self) -> tuple[CategoryRoute, ...]:
        return (self.choice.category,)

    async def route(self, prompt: str, client: str | None) -> RouteChoice:
        return self.choice


class Answering:
    provider = "openai"

    def __init__(self, answer: ChatAnswer) -> None:
        self.answer = answer

    async def complete(self, request: Any, on_text: Any = None) -> ChatAnswer:
        return self.answer


def _tool():
    server = McpServer("t", "1")
    register_gateway_tools(server, None, None, GatewaySettings())
    return server.tools.get("routeCompletion")


TOOL = _tool()
VALIDATOR = compile_validator(TOOL.definition.output_schema)


def test_the_per_call_check_is_the_one_these_properties_stand_in_for():
    assert TOOL.output_checked_in_tests and not TOOL.output_checked_at_run_time


def _result_fits(answer: ChatAnswer, choice: RouteChoice, model: str | None) -> None:
    service = GatewayService(Answering(answer), Routing(choice), GatewaySettings())
    routed = asyncio.run(service.route_completion("a prompt", model=model))
    result = routed.wire()
    errors = [error.message for error in VALIDATOR.iter_errors(result)]
    assert not errors, (errors, result)
    dumps(result)  # and it encodes as the tool's answer is encoded


@SETTINGS
@given(document=DOCUMENT, attempt=st.integers(min_value=1, max_value=4), choice=DECISION,
       model=st.none() | NAMES)
def test_any_plain_answer_is_refused_or_fits_the_schema(document, attempt, choice, model):
    try:
        answer = _answer(document, attempt)
    except UNUSABLE_ANSWER:
        return
    _result_fits(answer, choice, model)


async def _from_stream(chunks: list[Any]) -> ChatAnswer | GatewayFailure:
    gateway = OpenAICompatibleGateway(GatewayConfig(url="http://127.0.0.1:9/v1"))

    async def events():
        for chunk in chunks:
            yield SimpleNamespace(data=orjson.dumps(chunk).decode())

    async def sink(piece: str) -> None:
        assert type(piece) is str and piece

    return await gateway._gather_stream(events(), 200, sink, 1)


@SETTINGS
@given(chunks=st.lists(COMPLETION | JSON, max_size=4), done=st.booleans(), choice=DECISION)
def test_any_streamed_answer_is_refused_or_fits_the_schema(chunks, done, choice):
    try:
        outcome = asyncio.run(_from_stream(chunks + (["[DONE]"] if done else [])))
    except UNUSABLE_ANSWER:
        return
    if isinstance(outcome, GatewayFailure):
        return
    _result_fits(outcome, choice, None)


@pytest.mark.parametrize("usage", [{"prompt_tokens": "many"}, {"total_tokens": float("inf")},
                                   {"completion_tokens": 2 ** 70}, {"prompt_tokens": [1]}])
def test_a_token_count_that_is_no_count_makes_the_answer_unusable(usage):
    document = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}], "usage": usage}
    with pytest.raises(UNUSABLE_ANSWER):
        _answer(document, 1)


def test_a_finish_reason_that_is_not_text_makes_the_answer_unusable():
    with pytest.raises(UNUSABLE_ANSWER):
        _answer({"choices": [{"message": {"content": "hi"}, "finish_reason": {"why": "stop"}}]}, 1)


def test_counts_given_as_numbers_or_numeric_text_are_read_as_before():
    answer = _answer({"choices": [{"message": {"content": "hi"}, "finish_reason": None}], "model": "m",
                      "usage": {"prompt_tokens": "12", "completion_tokens": 6.0}}, 2)
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens, answer.usage.total_tokens) == (12, 6, 18)
    assert (answer.text, answer.model, answer.finish_reason, answer.attempts) == ("hi", "m", None, 2)

