"""A fast "valid" for the simple JSON Schemas tool signatures produce, compiled to plain predicates.

jsonschema walks a schema through its generic keyword dispatch on every call, which for a small object
costs as much as the rest of a `tools/call`. Schemas derived from type hints use a
handful of keywords, so for those `compile_quick_check` builds a predicate of plain type and key checks. The predicate is only trusted when it says *valid*: it may be stricter
than the schema where JSON Schema is subtle (there 1.0 is an integer, here it is not), and when it
says no, the full validator decides and explains. A schema using any keyword outside the subset, or
naming its own `$schema`, gets no predicate and is always checked in full.
"""

from __future__ import annotations

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


def compile_quick_check(schema: Any) -> Check | None:
    """A predicate whose True means `schema` accepts the instance, or None when the schema is not simple."""
    if schema is True or schema == {}:
        return _always
    if schema is False:
        return _never
    if not isinstance(schema, dict):
        return None
    checks: list[Check] = []
    for keyword, value in schema.items():
        if keyword in _ANNOTATIONS or keyword == "additionalProperties":
            continue  # additionalProperties is compiled together with properties
        make = _KEYWORDS.get(keyword)
        check = make(value) if make is not None else None
        if check is None:
            return None
        checks.append(check)
    if "additionalProperties" in schema:
        check = _object_members(schema.get("properties", {}), schema["additionalProperties"])
        if check is None:
            return None
        checks.append(check)
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    return _all_of(tuple(checks))


def _all_of(checks: tuple[Check, ...]) -> Check:
    # A plain loop: `all()` over a generator costs a frame resume per check, on every call.
    def check(instance: Any) -> bool:
        for each in checks:
            if not each(instance):
                return False
        return True

    return check


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _type(value: Any) -> Check | None:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or any(name not in _TYPES for name in names):
        return None
    allowed = frozenset().union(*(_TYPES[name] for name in names))

    def check(instance: Any) -> bool:
        return type(instance) in allowed

    check.types = allowed  # type: ignore[attr-defined]  # lets containers test all members in C (_member_types)
    return check


def _member_types(check: Check) -> frozenset[type] | None:
    """The allowed classes when `check` is a bare type check; then a container tests all its members at
    once with `allowed.issuperset(map(type, members))`, with no Python call per member."""
    return getattr(check, "types", None)


def _properties(value: Any) -> Check | None:
    if not isinstance(value, dict):
        return None
    members = {name: compile_quick_check(sub) for name, sub in value.items()}
    if any(check is None for check in members.values()):
        return None
    checks = [(name, check) for name, check in members.items() if check is not _always]

    def check(instance: Any) -> bool:
        if not isinstance(instance, dict):
            return True  # properties only constrain objects
        for name, sub in checks:
            if name in instance and not sub(instance[name]):  # type: ignore[misc]
                return False
        return True

    return check


def _object_members(properties: Any, additional: Any) -> Check | None:
    """additionalProperties: every member not named in `properties` must match `additional`."""
    rest = compile_quick_check(additional)
    if rest is None or not isinstance(properties, dict):
        return None
    named = frozenset(properties)
    if rest is _always:
        return _always
    types = _member_types(rest)
    if types is not None and not named:
        return lambda instance: not isinstance(instance, dict) or types.issuperset(map(type, instance.values()))
    return lambda instance: not isinstance(instance, dict) or all(
        rest(member) for name, member in instance.items() if name not in named)


def _required(value: Any) -> Check | None:
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        return None
    names = tuple(value)
    return lambda instance: not isinstance(instance, dict) or all(name in instance for name in names)


def _items(value: Any) -> Check | None:
    sub = compile_quick_check(value)
    if sub is None:
        return None
    types = _member_types(sub)
    if types is not None:
        return lambda instance: not isinstance(instance, list) or types.issuperset(map(type, instance))
    return lambda instance: not isinstance(instance, list) or all(sub(item) for item in instance)


def _any_of(value: Any) -> Check | None:
    if not isinstance(value, list) or not value:
        return None
    options = [compile_quick_check(sub) for sub in value]
    if any(option is None for option in options):
        return None
    return lambda instance: any(option(instance) for option in options)  # type: ignore[misc]


def _enum(value: Any) -> Check | None:
    # Only strings: JSON Schema equality between numbers and booleans has subtleties we leave to jsonschema.
    if not isinstance(value, list) or not all(isinstance(member, str) for member in value):
        return None
    members = frozenset(value)
    return lambda instance: type(instance) is str and instance in members


_NUMBERS = frozenset({int, float})  # exact classes: a boolean is not a number in JSON Schema


def _bound(holds: Callable[[Any, Any], bool]) -> Callable[[Any], Check | None]:
    """minimum/maximum and their exclusive forms: they constrain numbers and ignore everything else.
    Only a numeric bound compiles (draft-04's boolean exclusiveMinimum goes to jsonschema)."""

    def make(limit: Any) -> Check | None:
        if type(limit) not in _NUMBERS:
            return None
        return lambda instance: type(instance) not in _NUMBERS or holds(instance, limit)

    return make


def _size(of: type, holds: Callable[[int, int], bool]) -> Callable[[Any], Check | None]:
    """minLength/maxLength (code points, as Python counts them) and minItems/maxItems."""

    def make(limit: Any) -> Check | None:
        if type(limit) is not int or limit < 0:
            return None
        return lambda instance: type(instance) is not of or holds(len(instance), limit)

    return make


_KEYWORDS: dict[str, Callable[[Any], Check | None]] = {
    "minimum": _bound(lambda value, limit: value >= limit),
    "maximum": _bound(lambda value, limit: value <= limit),
    "exclusiveMinimum": _bound(lambda value, limit: value > limit),
    "exclusiveMaximum": _bound(lambda value, limit: value < limit),
    "minLength": _size(str, lambda size, limit: size >= limit),
    "maxLength": _size(str, lambda size, limit: size <= limit),
    "minItems": _size(list, lambda size, limit: size >= limit),
    "maxItems": _size(list, lambda size, limit: size <= limit),
    "type": _type,
    "properties": _properties,
    "required": _required,
    "items": _items,
    "anyOf": _any_of,
    "enum": _enum,
}
