"""Full JSON Schema validation (jsonschema), imported only when something needs it.

jsonschema is a large part of `hexmcp stdio`'s cold start, and nothing before the
`initialize` answer needs it. A tool registered by `ToolRegistry.add` still has its schemas checked
there and then (`compile_validator` imports jsonschema at that point); only tools whose schemas are
checked by our own tests (the built-in ones, `schemas_checked_in_tests=True`) get a `LazyValidator`,
which compiles on first use: the first argument the quick check does not pass, or the first result to
explain.
"""

from __future__ import annotations

import threading
from typing import Any


def compile_validator(schema: dict[str, Any]) -> Any:
    """A jsonschema validator for `schema` (draft 2020-12 unless `$schema` says otherwise); raises
    jsonschema's SchemaError for a schema that is not valid JSON Schema."""
    import jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def best_error(validator: Any, instance: Any) -> Any | None:
    """The error jsonschema ranks most relevant, or None when `instance` is valid."""
    from jsonschema.exceptions import best_match

    return best_match(validator.iter_errors(instance))


#: The longest value an error message quotes whole; a longer one is named by its length, so a 20,000-character
#: prompt over a limit is not sent back to the client (and into the log) inside the refusal.
QUOTED_CHARS = 80


def describe_error(where: str, error: Any) -> str:
    """`where` (`argument prompt`) and what is wrong with it, without quoting a long value whole: a string
    or array over its limit says its size and the limit; any other long value is cut to its start."""
    instance, limit = error.instance, error.validator_value
    if error.validator == "maxLength" and isinstance(instance, str):
        return f"{where} is {len(instance)} characters long; the limit is {limit}"
    if error.validator == "maxItems" and isinstance(instance, list):
        return f"{where} has {len(instance)} items; the limit is {limit}"
    quoted = repr(instance)
    if len(quoted) <= QUOTED_CHARS or quoted not in error.message:
        return f"{where}: {error.message}"
    size = f"{len(instance)} characters" if isinstance(instance, str) else f"{len(quoted)} characters as written"
    return f"{where}: " + error.message.replace(quoted, f"{quoted[:QUOTED_CHARS // 2]}... ({size})")


def json_path(error: Any) -> str:
    """Where a jsonschema error sits, as `$.a[0].b`."""
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


class LazyValidator:
    """A validator compiled on first use, for a schema already known to be valid JSON Schema."""

    __slots__ = ("_schema", "_compiled", "_lock")

    def __init__(self, schema: dict[str, Any]) -> None:
        self._schema = schema
        self._compiled: Any | None = None
        self._lock = threading.Lock()  # tools are called from the event loop and from worker threads

    def _validator(self) -> Any:
        if self._compiled is None:
            with self._lock:
                if self._compiled is None:
                    self._compiled = compile_validator(self._schema)
        return self._compiled

    def is_valid(self, instance: Any) -> bool:
        return self._validator().is_valid(instance)

    def iter_errors(self, instance: Any) -> Any:
        return self._validator().iter_errors(instance)
