"""A fast "valid" for the simple JSON Schemas tool signatures produce, compiled to one plain function.

jsonschema walks a schema through its generic keyword dispatch on every call, which for a small object
costs as much as the rest of a `tools/call`. Schemas derived from type hints use a
handful of keywords, so for those `compile_quick_check` writes one Python expression of plain type and
key checks and compiles it into one function: a call of the check is one Python call, however many
keywords and members the schema has (a predicate per keyword, nested, cost a call per keyword and member
on every `tools/call`). The predicate is only trusted when it says *valid*: it may be stricter
than the schema where JSON Schema is subtle (there 1.0 is an integer, here it is not), and when it
says no, the full validator decides and explains. A schema using any keyword outside the subset, or
naming its own `$schema`, or nested too deep for one expression, gets no predicate and is always
checked in full.

Nothing from the schema is written into the source but names this module makes: every value (a
property name, a limit, an enum's members) is a constant the function reads by name.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable

Check = Callable[[Any], bool]

# Keywords that annotate and never fail an instance.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "deprecated", "readOnly",
                          "writeOnly"})
# Exact classes only, so booleans are not integers and nothing outside the JSON data model passes.
_TYPES: dict[str, frozenset[type]] = {
    "object": frozenset({dict}), "array": frozenset({list}), "string": frozenset({str}),
    "integer": frozenset({int}), "number": frozenset({int, float}), "boolean": frozenset({bool}),
    "null": frozenset({type(None)}),
}
_NUMBERS = frozenset({int, float})  # exact classes: a boolean is not a number in JSON Schema
_TRUE = "True"  # the expression of a schema that accepts everything


def compile_quick_check(schema: Any) -> Check | None:
    """A predicate whose True means `schema` accepts the instance, or None when the schema is not simple."""
    if schema is True or schema == {}:
        return _always
    if schema is False:
        return _never
    source = _Source()
    try:
        expression = _expression(schema, "instance", source)
        if expression is None:
            return None
        if expression == _TRUE:
            return _always
        namespace = dict(source.constants)
        exec(compile(f"def check(instance):\n    return {expression}\n", "<quick_check>", "exec"), namespace)
    except (RecursionError, MemoryError, SyntaxError):  # too deep for one expression: the full validator decides
        return None
    return namespace["check"]  # type: ignore[no-any-return]


class _Source:
    """What a generated expression refers to: its constants by name, and fresh names for loop variables."""

    def __init__(self) -> None:
        self.constants: dict[str, Any] = {"__builtins__": {"type": type, "isinstance": isinstance, "dict": dict,
                                                           "list": list, "str": str, "len": len, "all": all,
                                                           "map": map}}
        self._numbers = itertools.count()

    def constant(self, value: Any) -> str:
        name = f"_c{len(self.constants)}"
        self.constants[name] = value
        return name

    def variable(self) -> str:
        return f"_v{next(self._numbers)}"


def _expression(schema: Any, subject: str, source: _Source) -> str | None:
    """A Python expression, true when `schema` surely accepts the value `subject` names; None: not simple."""
    if schema is True or schema == {}:
        return _TRUE
    if schema is False:
        return "False"
    if not isinstance(schema, dict):
        return None
    parts: list[str] = []
    for keyword, value in schema.items():
        if keyword in _ANNOTATIONS or keyword == "additionalProperties":
            continue  # additionalProperties is compiled together with properties
        make = _KEYWORDS.get(keyword)
        part = make(value, subject, source) if make is not None else None
        if part is None:
            return None
        parts.append(part)
    if "additionalProperties" in schema:
        part = _object_members(schema.get("properties", {}), schema["additionalProperties"], subject, source)
        if part is None:
            return None
        parts.append(part)
    return _all_of(parts)


def _all_of(parts: list[str]) -> str:
    parts = [part for part in parts if part != _TRUE]
    if not parts:
        return _TRUE
    return parts[0] if len(parts) == 1 else "(" + " and ".join(parts) + ")"


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _type_names(value: Any) -> frozenset[type] | None:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or any(not isinstance(name, str) or name not in _TYPES
                                                       for name in names):
        return None
    return frozenset().union(*(_TYPES[name] for name in names))


def _type(value: Any, subject: str, source: _Source) -> str | None:
    allowed = _type_names(value)
    if allowed is None:
        return None
    if len(allowed) == 1:
        return f"type({subject}) is {source.constant(next(iter(allowed)))}"
    return f"type({subject}) in {source.constant(allowed)}"


def _member_types(schema: Any) -> frozenset[type] | None:
    """The allowed classes when `schema` is a bare type check (annotations aside); then a container tests
    all its members at once with `allowed.issuperset(map(type, members))`, with no Python step per member."""
    if not isinstance(schema, dict) or "type" not in schema:
        return None
    if any(keyword not in _ANNOTATIONS for keyword in schema if keyword != "type"):
        return None
    return _type_names(schema["type"])


def _properties(value: Any, subject: str, source: _Source) -> str | None:
    if not isinstance(value, dict):
        return None
    parts: list[str] = []
    for name, sub in value.items():
        member = f"{subject}[{source.constant(name)}]"
        check = _expression(sub, member, source)
        if check is None:
            return None
        if check != _TRUE:
            parts.append(f"({source.constant(name)} not in {subject} or {check})")
    if not parts:
        return _TRUE
    return f"(not isinstance({subject}, dict) or {_all_of(parts)})"  # properties only constrain objects


def _object_members(properties: Any, additional: Any, subject: str, source: _Source) -> str | None:
    """additionalProperties: every member not named in `properties` must match `additional`."""
    key, member = source.variable(), source.variable()
    rest = _expression(additional, member, source)
    if rest is None or not isinstance(properties, dict):
        return None
    named = frozenset(properties)
    if rest == _TRUE:
        return _TRUE
    types = _member_types(additional)
    if types is not None and not named:
        return f"(not isinstance({subject}, dict) or {source.constant(types)}.issuperset(map(type, {subject}.values())))"
    return (f"(not isinstance({subject}, dict) or all({rest} for {key}, {member} in {subject}.items() "
            f"if {key} not in {source.constant(named)}))")


def _required(value: Any, subject: str, source: _Source) -> str | None:
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        return None
    if not value:
        return _TRUE
    present = " and ".join(f"{source.constant(name)} in {subject}" for name in value)
    return f"(not isinstance({subject}, dict) or ({present}))"


def _items(value: Any, subject: str, source: _Source) -> str | None:
    item = source.variable()
    sub = _expression(value, item, source)
    if sub is None:
        return None
    if sub == _TRUE:
        return _TRUE
    types = _member_types(value)
    if types is not None:
        return f"(not isinstance({subject}, list) or {source.constant(types)}.issuperset(map(type, {subject})))"
    return f"(not isinstance({subject}, list) or all({sub} for {item} in {subject}))"


def _any_of(value: Any, subject: str, source: _Source) -> str | None:
    if not isinstance(value, list) or not value:
        return None
    options = [_expression(sub, subject, source) for sub in value]
    if any(option is None for option in options):
        return None
    if _TRUE in options:
        return _TRUE
    return "(" + " or ".join(options) + ")"  # type: ignore[arg-type]


def _enum(value: Any, subject: str, source: _Source) -> str | None:
    # Only strings: JSON Schema equality between numbers and booleans has subtleties we leave to jsonschema.
    if not isinstance(value, list) or not all(isinstance(member, str) for member in value):
        return None
    return f"(type({subject}) is str and {subject} in {source.constant(frozenset(value))})"


def _bound(operator: str) -> Callable[[Any, str, _Source], str | None]:
    """minimum/maximum and their exclusive forms: they constrain numbers and ignore everything else.
    Only a numeric bound compiles (draft-04's boolean exclusiveMinimum goes to jsonschema)."""

    def make(limit: Any, subject: str, source: _Source) -> str | None:
        if type(limit) not in _NUMBERS:
            return None
        return f"(type({subject}) not in {source.constant(_NUMBERS)} or {subject} {operator} {source.constant(limit)})"

    return make


def _size(of: type, operator: str) -> Callable[[Any, str, _Source], str | None]:
    """minLength/maxLength (code points, as Python counts them) and minItems/maxItems."""

    def make(limit: Any, subject: str, source: _Source) -> str | None:
        if type(limit) is not int or limit < 0:
            return None
        return f"(type({subject}) is not {of.__name__} or len({subject}) {operator} {source.constant(limit)})"

    return make


_KEYWORDS: dict[str, Callable[[Any, str, _Source], str | None]] = {
    "minimum": _bound(">="),
    "maximum": _bound("<="),
    "exclusiveMinimum": _bound(">"),
    "exclusiveMaximum": _bound("<"),
    "minLength": _size(str, ">="),
    "maxLength": _size(str, "<="),
    "minItems": _size(list, ">="),
    "maxItems": _size(list, "<="),
    "type": _type,
    "properties": _properties,
    "required": _required,
    "items": _items,
    "anyOf": _any_of,
    "enum": _enum,
}
