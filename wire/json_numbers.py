"""Valid JSON that orjson cannot hold: a number past a double's range (a 5,000-digit id, `1e999`).

orjson reads an integer past 64 bits as a double and refuses one past a double's range with "number is
infinity when parsed as double", the same exception as for text that is not JSON at all. Such a message
is valid JSON, so its exact answer is not -32700 Parse error but an invalid id (-32600) or an invalid
param (-32602), naming where the number is. `find` decides that, and only after orjson has failed on
a number, so the normal path pays nothing: it parses the text again with the standard library, with
every number read as text (no `int()` of thousands of digits: that would hit Python's max-str-digits
limit, and cost quadratic time before it), and returns the first number a double cannot hold, with its
place. The text is already bounded by the transport's message size cap; nesting deeper than Python's
recursion limit (about orjson's own 1,024) stays a parse error.

The standard library is looser than orjson in one respect: it takes an escaped lone surrogate
(`"\\ud800"`), which orjson refuses; `find` walks every string and gives up (a parse error) on one.
"""

from __future__ import annotations

import json
import math
from typing import Any

import attrs

# orjson's message for a number past a double's range: the only orjson failure `find` looks into.
OVERFLOW_MESSAGE = "number is infinity when parsed as double"


@attrs.frozen
class OutOfRange:
    """A number a double cannot hold, as written; `path` is where it sits (`("params", "arguments", "n")`)."""

    text: str
    path: tuple[str | int, ...] = ()

    @property
    def is_integer(self) -> bool:
        return not any(mark in self.text for mark in ".eE")

    def describe(self) -> str:
        kind = "integer" if self.is_integer else "number"
        size = len(self.text.lstrip("-")) if self.is_integer else len(self.text)
        unit = "digits" if self.is_integer else "characters"
        return f"{kind} out of range ({size} {unit}; a JSON number here must fit a 64-bit float)"


def place(path: tuple[str | int, ...]) -> str:
    """`("params", "items", 3)` as `$.params.items[3]`."""
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)


def find(raw: bytes | str) -> tuple[Any, OutOfRange] | None:
    """The value `raw` holds, each out-of-range number in it an `OutOfRange`, and the first of them; None
    when `raw` is not valid JSON after all (or is nested too deep to tell), so the parse error stands."""
    try:
        text = raw if isinstance(raw, str) else bytes(raw).decode("utf-8")
        value = json.loads(text, parse_int=_integer, parse_float=_float, parse_constant=_not_json)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError; so is a NaN (`_not_json`)
        return None
    first = _first(value)
    return None if first is None else (value, first)


def _integer(text: str) -> Any:
    # float() of a long digit string has no max-str-digits limit and is linear; int() of it is neither.
    # An integer a double holds has at most 309 digits: int() of it is cheap and within the limit (the
    # value matters for an id, which a refusal of the params echoes).
    return OutOfRange(text) if math.isinf(float(text)) else int(text)


def _float(text: str) -> Any:
    number = float(text)
    return OutOfRange(text) if math.isinf(number) else number


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # the standard library accepts NaN and Infinity; JSON does not


def _first(value: Any) -> OutOfRange | None:
    """The first out-of-range number in document order, with its path; None when there is none, or when
    a string holds a lone surrogate (the standard library takes `"\\ud800"`; orjson, and so hexmcp, does not:
    a parse error). Iterative: nesting is bounded by the parse, not by this walk's stack."""
    first: OutOfRange | None = None
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        kind = type(item)
        if kind is OutOfRange:
            first = first or attrs.evolve(item, path=path)
        elif kind is str:
            if not _encodable(item):
                return None
        elif kind is dict:
            for key in item:
                if not _encodable(key):
                    return None
            stack.extend((path + (key,), member) for key, member in reversed(item.items()))
        elif kind is list:
            stack.extend((path + (index,), member) for index, member in reversed(list(enumerate(item))))
    return first


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True
