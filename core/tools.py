"""Tools: declared once, validated against a schema checked at registration, called by name.

A tool is an async function. Declared with `@registry.tool()` its input schema comes from its type
hints, and it receives its arguments as keyword arguments (plus `ctx: ToolContext` if it asks). Declared
with `registry.add(...)` it receives the arguments dict and the context, for tools whose schema is
written by hand. A tool returns a `CallToolResult`, text, content blocks, or a structured value
(dict/attrs), which goes out as JSON text and, where the version has it, as `structuredContent`.
"""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable, ContextManager

import attrs

from . import models, versions
from .context import ToolContext
from .convert import to_wire
from .errors import ErrorCode, ProtocolError
from .json_encoder import dumps
from .list_changes import ListChanges
from .schemas.quick_check import Check, compile_quick_check
from .schemas.from_types import input_schema_for, schema_for
from .tasks.model import LongRunning
from .schemas.validation import LazyValidator, best_error, compile_validator, describe_error, json_path

NOT_COMPILED = object()  # a quick check not compiled yet (`RegisteredTool.quick_check`)
ToolHandler = Callable[[dict[str, Any], ToolContext], Awaitable[Any]]
_CONTENT_TYPES = (models.TextContent, models.ImageContent, models.AudioContent, models.ResourceLink,
                  models.EmbeddedResource)


@attrs.frozen(kw_only=True)
class RegisteredTool:
    definition: models.Tool
    handler: ToolHandler
    validator: Any
    output_validator: Any | None
    quick_check: Check | None | object = attrs.field(default=NOT_COMPILED, eq=False)
    """A fast "valid" for a simple input schema (quick_check.py), or None; compiled on the tool's first call
    (`input_check`), not at registration: compiling costs a server's start-up a few milliseconds."""
    output_quick_check: Check | None | object = attrs.field(default=NOT_COMPILED, eq=False)  # the same for the output schema (`output_check`)
    declared_sizes: tuple[tuple[str, type, int, str], ...] | object = attrs.field(default=NOT_COMPILED, eq=False)
    """(argument, its JSON type, the limit, the unit) for each top-level argument whose schema declares
    maxItems, maxProperties or maxLength; read from the schema on the first refused call."""
    long_running: LongRunning | None = None  # runs as a task for clients that declare the tasks extension
    output_checked_in_tests: bool = False
    """A built-in tool whose results property tests check against its output schema: not
    re-checked on every call. Every other tool's result is checked on every call."""
    takes_context: bool = True
    """False: the handler never reads its `ToolContext` (a decorated function without a `ctx` parameter),
    so a call of it builds none and hands the handler None."""

    @property
    def output_checked_at_run_time(self) -> bool:
        return self.output_validator is not None and not self.output_checked_in_tests

    def input_check(self) -> Check | None:
        check = self.quick_check
        if check is NOT_COMPILED:
            check = self._keep("quick_check", compile_quick_check(self.definition.input_schema))
        return check  # type: ignore[return-value]

    def output_check(self) -> Check | None:
        check = self.output_quick_check
        if check is NOT_COMPILED:
            schema = self.definition.output_schema
            check = self._keep("output_quick_check", compile_quick_check(schema) if schema else None)
        return check  # type: ignore[return-value]

    def _check_declared_sizes(self, arguments: dict[str, Any]) -> None:
        """Refuse an argument over the size its own schema declares, by that size alone: jsonschema walks every
        item of an array (every member of an object) before it reaches `maxItems`, twice on the way to the
        best error, so a few megabytes of items held the event loop for seconds only to be refused."""
        sizes = self.declared_sizes
        if sizes is NOT_COMPILED:
            sizes = _declared_sizes(self.definition.input_schema)
            object.__setattr__(self, "declared_sizes", sizes)
        for name, kind, limit, unit in sizes:  # type: ignore[attr-defined]
            value = arguments.get(name)
            if type(value) is kind and len(value) > limit:
                wording = (f"is {len(value)} characters long" if kind is str else f"has {len(value)} {unit}")
                raise ProtocolError(ErrorCode.INVALID_PARAMS,
                                    f"Invalid arguments for tool '{self.definition.name}': argument {name} {wording}; "
                                    f"the limit is {limit}",
                                    {"path": f"$.arguments.{name}", "tool": self.definition.name, "limit": limit,
                                     "length": len(value)})

    def _keep(self, field: str, check: Check | None) -> Check | None:
        # A cache on a frozen class: the check is a function of the schema the definition holds, which never
        # changes (two first calls racing compile the same function twice).
        object.__setattr__(self, field, check)
        return check

    def check_arguments(self, arguments: Any) -> None:  # refuses what is not an object too
        check = self.quick_check
        if check is NOT_COMPILED:
            check = self.input_check()
        if check is not None and check(arguments):  # type: ignore[operator]
            return
        self._check_declared_sizes(arguments)
        if self.validator.is_valid(arguments):  # finding the best error is the slow path
            return
        error = best_error(self.validator, arguments)
        if error is not None:
            path = json_path(error)
            where = "arguments" if path == "$" else f"argument {path[2:]}"
            data: dict[str, Any] = {"path": f"$.arguments{path[1:]}", "tool": self.definition.name}
            if error.validator in ("maxLength", "maxItems") and isinstance(error.instance, (str, list)):
                # As a tool's own length check says it (classify_text's): the limit and what came.
                data.update(limit=error.validator_value, length=len(error.instance))
            raise ProtocolError(ErrorCode.INVALID_PARAMS,
                                f"Invalid arguments for tool '{self.definition.name}': {describe_error(where, error)}",
                                data)


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, RegisteredTool] = {}
        self._changes = ListChanges(self.definitions)
        # `get(name)`: the tool of that name, or None. The dict's own bound method, a C call on every
        # tools/call instead of a Python one (`_tools` is never replaced, only changed).
        self.get: Callable[[str], RegisteredTool | None] = self._tools.get

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def definitions(self) -> list[models.Tool]:
        return [tool.definition for tool in self._tools.values()]

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener` whenever the listed tools change (once per `batch()`)."""
        self._changes.listeners.append(listener)

    def batch(self) -> ContextManager[None]:
        """Register or drop many tools, tell the listeners once (one list_changed, not one per tool)."""
        return self._changes.batch()

    def add(
        self,
        name: str,
        handler: ToolHandler,
        *,
        description: str,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None = None,
        title: str | None = None,
        annotations: models.ToolAnnotations | None = None,
        icons: list[models.Icon] | None = None,
        meta: dict[str, Any] | None = None,
        schemas_checked_in_tests: bool = False,
        output_checked_in_tests: bool = False,
        long_running: bool | LongRunning = False,
        takes_context: bool = True,
    ) -> RegisteredTool:
        """Register a tool whose handler takes `(arguments, ctx)`. Its schemas are checked and compiled now,
        once (an invalid one raises jsonschema's SchemaError here), unless `schemas_checked_in_tests`: a
        built-in tool whose schemas a test checks, compiled on first use instead (schemas/validation.py).
        `long_running` makes the tool answer with a task (`CreateTaskResult`) when the client declares the
        tasks extension (True, or a `LongRunning` for the required / inputs-first variants).
        `output_checked_in_tests`: a built-in tool whose results a property test checks against its output
        schema, so they are not checked again on every call; never for a user's tool. `takes_context=False`:
        the handler ignores its second argument (it is then given None)."""
        definition = models.Tool(name=name, description=description, input_schema=input_schema,
                                 output_schema=output_schema, title=title, annotations=annotations,
                                 icons=icons, meta=meta)
        make_validator = LazyValidator if schemas_checked_in_tests else compile_validator
        tool = RegisteredTool(definition=definition, handler=handler, validator=make_validator(input_schema),
                              output_validator=make_validator(output_schema) if output_schema else None,
                              long_running=LongRunning.of(long_running),
                              output_checked_in_tests=output_checked_in_tests, takes_context=takes_context)
        previous = self._tools.get(name)
        self._tools[name] = tool  # a replaced tool keeps its place in the list
        if previous is None or previous.definition != definition:  # a new handler alone lists nothing new
            self._changes.changed()
        return tool

    def remove(self, name: str) -> None:
        if self._tools.pop(name, None) is not None:
            self._changes.changed()

    def tool(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        output_schema: dict[str, Any] | None = None,
        title: str | None = None,
        annotations: models.ToolAnnotations | None = None,
        long_running: bool | LongRunning = False,
        input_schema: dict[str, Any] | None = None,
        schemas_checked_in_tests: bool = False,
        output_checked_in_tests: bool = False,
    ) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]:
        """Decorator: the schema comes from the signature (or `input_schema`, for arguments a signature
        cannot say); a `ctx` parameter receives the ToolContext. `long_running=True` makes it a task for
        clients that declare the tasks extension. The two `*_checked_in_tests` flags are `add`'s, for
        built-in tools."""

        def register(function: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
            if not inspect.iscoroutinefunction(function):
                raise TypeError(f"tool {function.__name__} must be an async function")
            signature = inspect.signature(function)
            parameters = signature.parameters
            wants_context = "ctx" in parameters
            takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
            # The derived schema allows extra arguments (clients and models add them); they are not the
            # function's to receive, so they are dropped rather than crashing the call.
            known = frozenset(name for name in parameters if name != "ctx")
            declared_output = output_schema
            if declared_output is None:
                returns = signature.return_annotation
                if isinstance(returns, type) and (attrs.has(returns) or _is_typeddict(returns)):
                    declared_output = schema_for(returns)

            # A plain function returning the tool's coroutine: an async wrapper would add a coroutine and its
            # frame to every call only to pass the result on.
            def handler(arguments: dict[str, Any], ctx: ToolContext | None) -> Awaitable[Any]:
                if not takes_any and not arguments.keys() <= known:
                    arguments = {k: v for k, v in arguments.items() if k in known}
                if wants_context:
                    return function(**arguments, ctx=ctx)
                return function(**arguments)

            self.add(name or function.__name__, handler,
                     description=description or inspect.getdoc(function) or "",
                     input_schema=input_schema or input_schema_for(function, skip=frozenset({"ctx"})),
                     output_schema=declared_output, title=title, annotations=annotations, long_running=long_running,
                     schemas_checked_in_tests=schemas_checked_in_tests, output_checked_in_tests=output_checked_in_tests,
                     takes_context=wants_context)
            return function

        return register


def _is_typeddict(cls: type) -> bool:
    import typing

    return typing.is_typeddict(cls)


@attrs.define  # built for most tools/call answers: define's __init__ is half the cost of frozen's
class ToolAnswer:
    """A tool's text or structured value in the wire's own terms: the usual answers skip the
    `CallToolResult` model and its cattrs walk. A structured value is encoded once, and its JSON is both
    the text block and (`Ok.structured_json`) the bytes written as `structuredContent`."""

    text: str
    structured: dict[str, Any] | None = None
    structured_json: bytes | None = None

    def shaped(self, version: str) -> tuple[dict[str, Any], bytes | None]:
        """What `to_wire` makes of the same CallToolResult for `version`, key for key, and the structured
        content's JSON when that version carries it."""
        wire: dict[str, Any] = {"content": [{"text": self.text, "type": "text"}]}
        if self.structured is None or not versions.features(version).structured_output:
            return wire, None
        wire["structuredContent"] = self.structured
        return wire, self.structured_json


def to_call_result(value: Any, tool: RegisteredTool) -> models.CallToolResult | ToolAnswer:
    """Whatever a tool returned, as a result: text and structured values (also as JSON text) as a
    `ToolAnswer`, a result or content blocks the tool built as a CallToolResult."""
    structured: Any
    if type(value) is dict:  # the common answer first: one type test, not a chain of isinstance
        structured = value
    elif isinstance(value, str):
        return ToolAnswer(text=value)
    elif isinstance(value, models.CallToolResult):
        return value
    elif isinstance(value, _CONTENT_TYPES):
        return models.CallToolResult(content=[value])
    elif isinstance(value, list) and value and all(isinstance(v, _CONTENT_TYPES) for v in value):
        return models.CallToolResult(content=list(value))
    else:
        structured = attrs.asdict(value) if attrs.has(type(value)) else value
        if not isinstance(structured, dict):
            structured = {"result": structured}
    if tool.output_checked_at_run_time:
        check = tool.output_quick_check
        if check is NOT_COMPILED:
            check = tool.output_check()
        if check is None or not check(structured):  # type: ignore[operator]
            error = best_error(tool.output_validator, structured)
            if error is not None:
                raise OutputSchemaViolation(f"{json_path(error)}: {error.message}")
    encoded = dumps(structured)
    return ToolAnswer(text=encoded.decode(), structured=structured, structured_json=encoded)


def result_wire(result: models.CallToolResult | ToolAnswer, version: str) -> dict[str, Any]:
    """A tool's result as the wire dict for `version` (a task's stored result)."""
    return result.shaped(version)[0] if type(result) is ToolAnswer else to_wire(result, version)


def json_text(value: Any) -> str:
    """Compact JSON for a text block, from the one encoder."""
    return dumps(value).decode()


class OutputSchemaViolation(Exception):
    """A tool's structured result does not match its own outputSchema: a bug in the tool."""


_SIZE_KEYWORDS = (("maxItems", list, "items"), ("maxProperties", dict, "members"), ("maxLength", str, "characters"))


def _declared_sizes(schema: Any) -> tuple[tuple[str, type, int, str], ...]:
    """The size limits an input schema's own properties declare at their top level: each one fails the whole
    instance when exceeded, whatever else the schema says, so checking it first changes no verdict."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return ()
    found = []
    for name, subschema in properties.items():
        if isinstance(subschema, dict):
            for keyword, kind, unit in _SIZE_KEYWORDS:
                limit = subschema.get(keyword)
                if type(limit) is int and limit >= 0:
                    found.append((name, kind, limit, unit))
    return tuple(found)
