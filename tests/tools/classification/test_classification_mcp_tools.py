"""The MCP tool handlers: list_categories answers from the taxonomy alone, inference pool errors map to core codes.

Fast: no model is loaded. `classify` and `start` are replaced where a test needs them to fail or hang.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from hexmcp.core import ErrorCode, McpServer, ProtocolError
from hexmcp.tools.classification import ClassificationConfig
from hexmcp.tools.classification.mcp_tools import register_classification_tools
from hexmcp.tools.embedding.inference_pool import RequestTimeoutError, ServiceOverloadedError


def registered(config: ClassificationConfig | None = None):
    server = McpServer("t", "1")
    service = register_classification_tools(server, config or ClassificationConfig())
    return server, service


def test_list_categories_does_not_wait_for_the_model():
    server, service = registered()

    async def never_ready() -> None:  # a model that would take forever to load
        await asyncio.Event().wait()

    service.start = never_ready
    handler = server.tools.get("list_categories").handler
    result = asyncio.run(asyncio.wait_for(handler({}, None), timeout=5))
    assert result["categories"] == ["math", "science", "technology", "history", "general"]
    assert set(result["category_descriptions"]) == set(result["categories"])
    assert not service.ready


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ServiceOverloadedError("classification queue is full; retry later"), ErrorCode.SERVER_BUSY),
        (RequestTimeoutError("classification took longer than 10s"), ErrorCode.REQUEST_TIMEOUT),
    ],
)
def test_pool_errors_map_to_core_codes(error, code):
    server, service = registered()

    async def started() -> None:
        return None

    async def failing(text: str, with_probabilities: bool = False, client: str | None = None):
        assert client == "address:10.0.0.7"  # the per-client share of the queue is keyed by client, not session
        raise error

    service.start, service.classify = started, failing
    handler = server.tools.get("classify_text").handler
    with pytest.raises(ProtocolError) as caught:
        asyncio.run(handler({"text": "What is 5 + 3?"}, SimpleNamespace(session_id="session-1",
                                                                                 client_id="address:10.0.0.7")))
    assert caught.value.code is code
    assert caught.value.message == str(error)


@pytest.mark.parametrize(
    ("arguments", "message", "data"),
    [
        ({"text": " \n\t"}, "argument text must not be empty or whitespace only", {"path": "$.arguments.text"}),
        ({"text": "x" * 11}, "argument text is 11 characters long; the limit is 10",
         {"path": "$.arguments.text", "limit": 10, "length": 11}),
        ({"text": "fine", "with_probabilities": "yes"}, "argument with_probabilities must be a boolean, got str",
         {"path": "$.arguments.with_probabilities"}),
    ],
)
def test_classify_text_arguments_are_checked_once_with_one_message(arguments, message, data):
    """The service's check answers, before any model is loaded; the tool only words it for the client."""
    server, service = registered(ClassificationConfig(max_text_chars=10))
    handler = server.tools.get("classify_text").handler
    with pytest.raises(ProtocolError) as caught:
        asyncio.run(handler(arguments, SimpleNamespace(session_id="s", client_id="c")))
    assert caught.value.code is ErrorCode.INVALID_PARAMS
    assert caught.value.message == f"Invalid arguments for tool 'classify_text': {message}"
    assert caught.value.data == data
    assert not service.ready  # refused without starting the model


def test_classify_text_declares_its_length_limit_and_the_schema_check_words_it_as_the_service_does():
    """The limit is in the inputSchema a client reads (before, only a run-time check knew it); a text over
    it is refused by the core's schema check with the run-time check's message, limit and length."""
    server, service = registered(ClassificationConfig(max_text_chars=10))
    tool = server.tools.get("classify_text")
    assert tool.definition.input_schema["properties"]["text"]["maxLength"] == 10
    with pytest.raises(ProtocolError) as caught:
        tool.check_arguments({"text": "x" * 11})
    assert caught.value.message == ("Invalid arguments for tool 'classify_text': argument text is 11 characters long; "
                                    "the limit is 10")
    assert caught.value.data["limit"] == 10 and caught.value.data["length"] == 11
    assert caught.value.data["path"] == "$.arguments.text"
    tool.check_arguments({"text": "x" * 10})  # at the limit: accepted
    assert not service.ready
