"""What an error echoes of a client's input is bounded (core/echo.py): the message, every string in its
`data`, the length of its lists and objects, and a tool's own failure text. Found by the hostile-client
probes (bench/hostile_probes.py): a 3.6 MB `fetch` id came back as a 6.6 MB error message, and three such
requests wrote 9 MB to the log."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from hexmcp.core import ErrorCode, Rejection, json_encoder, versions
from hexmcp.core.echo import DATA_DEPTH, DATA_ITEMS, MESSAGE_CHARS, TOOL_FAILURE_CHARS, clip_data, clip_text
from hexmcp.wire import jsonrpc

from ..support.peer import CoreClient
from ..support.strategies import JSON_VALUES

# The clipped text's note says how long the whole was: a few dozen characters at most.
NOTE_CHARS = 40


def longest_string(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return max([len(str(key)) for key in value] + [longest_string(item) for item in value.values()] + [0])
    if isinstance(value, list):
        return max([longest_string(item) for item in value] + [0])
    return 0


def widest(value: Any) -> int:
    if isinstance(value, (dict, list)):
        items = value.values() if isinstance(value, dict) else value
        return max([len(value)] + [widest(item) for item in items])
    return 0


def depth(value: Any) -> int:
    if isinstance(value, (dict, list)):
        items = value.values() if isinstance(value, dict) else value
        return 1 + max([depth(item) for item in items] + [0])
    return 0


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 3 * MESSAGE_CHARS), st.characters())
def test_a_message_is_kept_whole_up_to_the_bound_and_clipped_past_it(size: int, character: str) -> None:
    text = "".join(chr(ord(character) ^ (i & 1)) if ord(character) > 1 else character for i in range(size))
    message = Rejection(code=ErrorCode.INVALID_PARAMS, message=text, event_id="ev-1").message
    if len(text) <= MESSAGE_CHARS:
        assert message == text
    else:
        assert message.startswith(text[:MESSAGE_CHARS - NOTE_CHARS]) and len(message) <= MESSAGE_CHARS
        assert str(len(text)) in message
    assert Rejection(code=ErrorCode.INVALID_PARAMS, message=message, event_id="ev-2").message == message


BIG_STRINGS = st.integers(0, 3 * MESSAGE_CHARS).map(lambda size: "x" * size)
WIDE_DATA = st.recursive(
    st.one_of(JSON_VALUES, BIG_STRINGS),
    lambda inner: st.lists(inner, max_size=3 * DATA_ITEMS)
    | st.dictionaries(st.text(max_size=4), inner, max_size=3 * DATA_ITEMS),
    max_leaves=60)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=8), WIDE_DATA, max_size=3 * DATA_ITEMS))
def test_data_is_bounded_in_every_string_list_and_object_and_stays_json(data: dict[str, Any]) -> None:
    kept = Rejection(code=ErrorCode.INVALID_PARAMS, message="m", event_id="ev-1", data=data).data
    assert longest_string(kept) <= max(MESSAGE_CHARS, max([len(key) for key in data] + [0]))
    assert widest(kept) <= DATA_ITEMS  # the kept items and one note of how many more
    assert depth(kept) <= DATA_DEPTH + 1
    json_encoder.dumps(jsonrpc.encode_rejection(1, Rejection(code=ErrorCode.INVALID_PARAMS, message="m",
                                                             event_id="ev-1", data=data)))
    if longest_string(data) <= MESSAGE_CHARS and widest(data) <= DATA_ITEMS and depth(data) <= DATA_DEPTH:
        assert kept == data  # nothing to bound: unchanged
    assert clip_data(kept) == kept  # bounding is done once: a bounded value passes through again unchanged


def test_wide_data_is_cut_once() -> None:
    data = {"items": list(range(3 * DATA_ITEMS)), "members": {str(n): n for n in range(3 * DATA_ITEMS)}}
    kept = clip_data(data)
    assert len(kept["items"]) == len(kept["members"]) == DATA_ITEMS
    assert kept["items"][-1] == f"… {2 * DATA_ITEMS + 1} more items"
    assert clip_data(kept) == kept


def test_small_flat_data_is_the_same_object() -> None:
    data = {"path": "$.arguments.id", "limit": 1000}
    assert clip_data(data) is data
    assert clip_text("short") == "short"


pytestmark = pytest.mark.anyio

HUGE = 1_000_000


def encoded_size(rejection: Rejection) -> int:
    return len(json_encoder.dumps(jsonrpc.encode_rejection(1, rejection)))


@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
async def test_a_huge_argument_of_the_wrong_type_gets_a_short_invalid_params(client: CoreClient, version: str) -> None:
    """As -32602 up to 2025-06-18, as an isError result from 2025-11-25 on: short either way."""
    await client.initialize(version)
    rejection = await client.refused_arguments({"name": "echo", "arguments": {"text": ["a"] * (HUGE // 5)}})
    assert rejection.code is ErrorCode.INVALID_PARAMS
    assert "argument text" in rejection.message and encoded_size(rejection) < 4 * MESSAGE_CHARS


async def test_a_huge_uri_or_method_name_is_not_echoed_whole(client: CoreClient) -> None:
    await client.initialize()
    read = await client.rejected("resources/read", {"uri": "demo://items/" + "\u0001" * HUGE})
    unknown = await client.rejected("x" * HUGE)
    assert unknown.code is ErrorCode.METHOD_NOT_FOUND
    for rejection in (read, unknown):
        assert encoded_size(rejection) < 8 * MESSAGE_CHARS, rejection.message[:200]


async def test_a_tools_own_failure_text_is_bounded_too(client: CoreClient) -> None:
    await client.initialize()
    result = await client.ok("tools/call", {"name": "refuse", "arguments": {"reason": "r" * HUGE}})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("r" * 100) and len(text) < TOOL_FAILURE_CHARS + NOTE_CHARS  # and " (eventId ...)"
    assert json.dumps(result)  # still a plain JSON result
