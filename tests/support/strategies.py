"""Hypothesis strategies for the core's attrs models, derived from their type hints.

Every field gets a value, optional ones sometimes None, so round trips exercise each rename and each
omit-if-default. JSON values stay finite (NaN never equals itself) and shallow enough to be quick.
"""

from __future__ import annotations

import types
import typing
from typing import Any

import attrs
from hypothesis import strategies as st

from hexmcp.core import models

JSON_SCALARS = st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.floats(allow_nan=False,
                                                                                  allow_infinity=False) | st.text()
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)


def strategy_for(hint: Any) -> st.SearchStrategy[Any]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return JSON_VALUES
    if hint is str:
        return st.text(max_size=20)
    if hint is bool:
        return st.booleans()
    if hint is int:
        return st.integers(-2**31, 2**31)
    if hint is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if hint is type(None):
        return st.none()
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin in (typing.Union, types.UnionType):
        return st.one_of([strategy_for(arg) for arg in args])
    if origin is list:
        return st.lists(strategy_for(args[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=8), strategy_for(args[1]), max_size=3)
    if attrs.has(hint):
        return model_strategy(hint)
    raise TypeError(f"no strategy for {hint!r}")


def model_strategy(cls: type) -> st.SearchStrategy[Any]:
    hints = typing.get_type_hints(cls, vars(models))
    fields = {field.name: st.deferred(lambda h=hints[field.name]: strategy_for(h)) for field in attrs.fields(cls)}
    return st.builds(cls, **fields)
