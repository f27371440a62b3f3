"""Hypothesis strategies for hostile POST bodies (as bytes) and the JSON-RPC shapes inside them.

Each body is a request the MCP endpoint could receive in an honest session: deep nesting, numbers no
double holds (thousands of digits, 1e999), invalid UTF-8 spliced into otherwise valid JSON, escaped lone
surrogates, members of the wrong type, responses and notifications where requests belong, batches
(empty, giant, with duplicated ids). The robustness suite (tests/conformance) covers the spec's
invalid-message classes against any server; these aim at what hexmcp's parser and dispatch do with them.
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from tests.support.strategies import JSON_VALUES

METHODS = st.sampled_from(["ping", "tools/list", "tools/call", "resources/read", "resources/subscribe",
                           "prompts/get", "completion/complete", "logging/setLevel", "tasks/get", "initialize",
                           "notifications/cancelled", "models/list", "no/such/method", ""])
HUGE_NUMBERS = st.one_of(st.integers(20, 20_000).map(lambda digits: "9" * digits),
                         st.integers(20, 20_000).map(lambda digits: "-1" + "0" * digits),
                         st.sampled_from(["1e999", "-1e999", "1e-999", "0.{}1".format("0" * 5000), "1" + "0" * 400 + ".5",
                                          "-0", "1E+308", "2.2250738585072014e-308", "123456789012345678901234567890"]))
IDS = st.one_of(st.integers(-2**63, 2**63), st.text(max_size=20), st.none(), st.booleans(), st.floats(allow_nan=False),
                st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
INVALID_UTF8 = st.sampled_from([b"\xff", b"\xfe\xff", b"\xc0\x80", b"\xc3\x28", b"\xe2\x82", b"\xed\xa0\x80",
                                b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80", b"\x80", b"\xe9"])
LONE_SURROGATES = st.sampled_from(["\\ud800", "\\udfff", "\\ud83d", "\\udc00\\ud800"])


def _dumps(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def wrong_shapes() -> st.SearchStrategy[bytes]:
    """A JSON object where a request should be, with members missing, extra, or of the wrong type."""
    members = st.fixed_dictionaries({}, optional={
        "jsonrpc": st.one_of(st.just("2.0"), st.just("1.0"), st.just(2.0), JSON_VALUES),
        "id": IDS, "method": st.one_of(METHODS, JSON_VALUES),
        "params": st.one_of(st.dictionaries(st.sampled_from(["name", "arguments", "uri", "cursor", "_meta", "level",
                                                             "taskId", "ref", "argument"]), JSON_VALUES, max_size=4),
                            JSON_VALUES),
        "result": JSON_VALUES, "error": JSON_VALUES})
    return members.map(_dumps)


@st.composite
def huge_numbers(draw: st.DrawFn) -> bytes:
    """A request with a number no double (or no sane int) holds, as its id or somewhere in its params."""
    number = draw(HUGE_NUMBERS)
    where = draw(st.sampled_from(["id", "params", "arguments"]))
    if where == "id":
        return b'{"jsonrpc":"2.0","id":%s,"method":"ping"}' % number.encode()
    if where == "params":
        return b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":%s}}' % number.encode()
    return (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"listModels","arguments":{"n":%s}}}'
            % number.encode())


@st.composite
def bad_text(draw: st.DrawFn) -> bytes:
    """A valid request with invalid UTF-8 bytes or an escaped lone surrogate spliced into a string."""
    method = draw(st.sampled_from([b"ping", b"tools/list", b"resources/read"]))
    body = b'{"jsonrpc":"2.0","id":1,"method":"' + method + b'","params":{"uri":"hexmcp://docs/README.md"}}'
    if draw(st.booleans()):
        junk = draw(INVALID_UTF8)
    else:
        junk = draw(LONE_SURROGATES).encode()
    strings = [i + 1 for i, byte in enumerate(body) if byte == ord('"')]
    at = draw(st.sampled_from(strings))
    return body[:at] + junk + body[at:]


@st.composite
def deep_nesting(draw: st.DrawFn) -> bytes:
    depth = draw(st.integers(500, 200_000))
    opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
    where = draw(st.sampled_from(["message", "params"]))
    nested = opener * depth + b"1" + closer * depth
    if where == "message":
        return nested
    return b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"listModels","arguments":{"x":' + \
        nested + b"}}}"


@st.composite
def small_batches(draw: st.DrawFn) -> bytes:
    """A batch of a few entries, some duplicated ids, some invalid entries, some notifications."""
    entries = draw(st.lists(st.one_of(
        st.builds(lambda i, m: {"jsonrpc": "2.0", "id": i, "method": m}, st.integers(0, 3), st.sampled_from(["ping", "tools/list"])),
        st.builds(lambda m: {"jsonrpc": "2.0", "method": m}, st.sampled_from(["notifications/cancelled", "ping"])),
        JSON_VALUES), max_size=12))
    return _dumps(entries)


def hostile_bodies() -> st.SearchStrategy[bytes]:
    return st.one_of(wrong_shapes(), huge_numbers(), bad_text(), deep_nesting(), small_batches(),
                     st.binary(max_size=200), st.sampled_from([b"", b"null", b"[]", b"{}", b"[[]]", b'"ping"', b"0",
                                                               b"\xef\xbb\xbf{}", b"{" * 10, b'{"id":1}' * 3]))


def giant_batch(entries: int, *, duplicate_ids: bool) -> bytes:
    """`entries` tools/list requests in one batch (each answer is ~1 KiB: the answer is ~1,000 times the body)."""
    return _dumps([{"jsonrpc": "2.0", "id": 1 if duplicate_ids else i, "method": "tools/list"} for i in range(entries)])
