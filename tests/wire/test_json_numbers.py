"""Valid JSON with a number past a double's range is refused as an id (-32600) or a param (-32602), never
as a parse error; text that is not JSON stays a parse error (`wire/json_numbers.py`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.core import ErrorCode
from hexmcp.wire import jsonrpc

# Numbers no double holds, as JSON text: integers of 310 to 20,000 digits (past Python's 4,300-digit
# int() limit too), and exponents past 1e308.
HUGE = st.one_of(st.integers(310, 20_000).map(lambda digits: "9" * digits),
                 st.integers(310, 20_000).map(lambda digits: "-1" + "0" * digits),
                 st.integers(309, 100_000).map(lambda exponent: f"1e{exponent}"),
                 st.sampled_from(["-1e999", "2.5E+400", "1" + "0" * 400 + ".5"]))
KEYS = st.text(st.characters(codec="utf-8"), max_size=8)
IDS = st.one_of(st.integers(-2**63, 2**63 - 1), st.text(max_size=20))


@st.composite
def params_with_a_huge_number(draw: st.DrawFn) -> tuple[str, str]:
    """(params as JSON text with one huge number somewhere inside, the path of that number)."""
    path: list[str | int] = []
    text = draw(HUGE)
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            key = draw(KEYS)
            siblings = draw(st.dictionaries(KEYS.filter(lambda k, key=key: k != key), st.integers(), max_size=3))
            members = [f"{json.dumps(k)}:{v}" for k, v in siblings.items()]
            at = draw(st.integers(0, len(members)))
            members.insert(at, f"{json.dumps(key)}:{text}")
            text = "{" + ",".join(members) + "}"
            path.insert(0, key)
        else:
            before = draw(st.lists(st.integers(), max_size=3))
            after = draw(st.lists(st.integers(), max_size=3))
            text = "[" + ",".join([*map(str, before), text, *map(str, after)]) + "]"
            path.insert(0, len(before))
    where = "$.params" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return text, where


def refusal_of(raw: bytes) -> tuple[Any, ErrorCode, str, Any]:
    with pytest.raises(ValueError) as caught:
        jsonrpc.decode(raw)
    return jsonrpc.decode_refusal(caught.value)


@given(number=HUGE, method=st.sampled_from(["ping", "tools/call"]))
def test_an_id_no_double_holds_is_an_invalid_request_with_id_null(number: str, method: str) -> None:
    raw = f'{{"jsonrpc":"2.0","id":{number},"method":"{method}","params":{{"a":1}}}}'.encode()
    request_id, code, message, data = refusal_of(raw)
    assert (request_id, code) == (None, ErrorCode.INVALID_REQUEST)
    assert "out of range" in message and "id" in message and data == {"path": "$.id"}
    assert len(message) < 300  # says how many digits, never echoes them


@given(request_id=IDS, params=params_with_a_huge_number())
def test_a_param_no_double_holds_is_invalid_params_naming_the_place_and_the_id(request_id: Any,
                                                                               params: tuple[str, str]) -> None:
    text, where = params
    raw = f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"method":"tools/call","params":{text}}}'.encode()
    got_id, code, message, data = refusal_of(raw)
    assert (got_id, code) == (request_id, ErrorCode.INVALID_PARAMS)
    assert data == {"path": where} and where in message


@given(number=HUGE)
def test_a_huge_number_in_a_notification_or_a_batch_is_an_invalid_request(number: str) -> None:
    for raw, where in ((f'{{"jsonrpc":"2.0","method":"notifications/x","params":{{"n":{number}}}}}', "$.params.n"),
                       (f'[{{"jsonrpc":"2.0","id":1,"method":"ping"}},{{"jsonrpc":"2.0","id":{number}}}]', "$[1].id")):
        request_id, code, _, data = refusal_of(raw.encode())
        assert (request_id, code, data) == (None, ErrorCode.INVALID_REQUEST, {"path": where})


@given(number=HUGE, breakage=st.sampled_from([',"x":NaN}', ',"x":Infinity}', ',"x":"\\ud800"}', ',"\\udc00":1}',
                                              ',}', '', '}}', ',"x":[1,]}', ',"x":"a\x01b"}']))
def test_text_that_is_not_json_after_the_number_stays_a_parse_error(number: str, breakage: str) -> None:
    raw = f'{{"jsonrpc":"2.0","id":{number}{breakage}'.encode()
    assert refusal_of(raw)[1] is ErrorCode.PARSE_ERROR


def test_an_integer_id_past_64_bits_says_so() -> None:
    """orjson reads 2**64 as a double: the id is invalid, and the message says why, not just "a number"."""
    message = jsonrpc.classify(jsonrpc.decode(b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}'))
    assert isinstance(message, jsonrpc.Invalid) and message.id is None and "out of range" in message.message


def test_nesting_past_the_parsers_limit_stays_a_parse_error() -> None:
    assert refusal_of(b"[" * 5000 + b"1e999" + b"]" * 5000)[1] is ErrorCode.PARSE_ERROR
