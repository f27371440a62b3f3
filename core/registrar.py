"""Decorators that register tools, resources and prompts on a server: what a user's `hexmcp.Server` and
every tool pack (`Setup.registrar`) use alike.

A tool's input schema comes from its type hints and its description from its docstring; an attrs class
or TypedDict return type is its output schema. Plain functions run in a worker thread, so a handler that
blocks never stalls the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from typing import Any, Awaitable, Callable, Iterable

from . import models
from .prompts import Completer
from .server import McpServer
from .tasks.model import LongRunning

Handler = Callable[..., Any]


class Registrar:
    def __init__(self, mcp: McpServer) -> None:
        self.mcp = mcp

    def tool(self, name: str | None = None, *, description: str | None = None, title: str | None = None,
             annotations: models.ToolAnnotations | None = None, output_schema: dict[str, Any] | None = None,
             long_running: bool | LongRunning = False, **built_in: bool) -> Callable[[Handler], Handler]:
        """Decorator: a tool whose input schema comes from the function's type hints and whose description
        is its docstring. An attrs class or TypedDict return type is its output schema (structured
        content). A `ctx: ToolContext` parameter gets the request's context. Plain functions run in a
        worker thread, so they never block the server. (`built_in`: the core's `*_checked_in_tests` flags,
        which hexmcp's own packs set for schemas and results their tests check.)"""
        def register(function: Handler) -> Handler:
            self.mcp.tools.tool(name, description=description, title=title, annotations=annotations,
                                output_schema=output_schema, long_running=long_running,
                                **built_in)(as_async(function))
            return function

        return register

    def add_tool(self, name: str, handler: Handler, *, input_schema: dict[str, Any], description: str = "",
                 output_schema: dict[str, Any] | None = None, title: str | None = None,
                 annotations: models.ToolAnnotations | None = None) -> None:
        """A tool from an existing registry: `handler(**arguments)` (a plain or async function) with the JSON
        Schema its arguments are validated against (checked now; an invalid schema raises SchemaError)."""
        call = as_async(handler)

        async def by_arguments(arguments: dict[str, Any], ctx: Any) -> Any:
            return await call(**arguments)

        self.mcp.tools.add(name, by_arguments, description=description, input_schema=input_schema,
                           output_schema=output_schema, title=title, annotations=annotations)

    def add_tools(self, registry: Iterable[tuple[str, dict[str, Any], Handler]]) -> None:
        """Every `(name, input schema, handler)` of an existing registry, as `add_tool` adds one; a handler's
        docstring is its description. Connected clients hear one tools/list_changed for all of them."""
        with self.mcp.tools.batch():
            for name, schema, handler in registry:
                self.add_tool(name, handler, input_schema=schema, description=inspect.getdoc(handler) or "")

    def resource(self, uri: str, *, name: str | None = None, title: str | None = None,
                 description: str | None = None, mime_type: str | None = None,
                 completer: Completer | None = None) -> Callable[[Handler], Handler]:
        """Decorator: a resource read by calling the function. A URI with `{placeholders}` is a template
        whose values are passed as keyword arguments (`notes://{day}` -> `read(day=...)`), and whose
        `completer(argument, value, context)` offers values for them."""
        if completer is not None and "{" not in uri:
            raise ValueError(f"only a URI template's placeholders complete, and {uri!r} has none")

        def register(function: Handler) -> Handler:
            reader = as_async(function)
            label = name or function.__name__
            text = description or inspect.getdoc(function)
            if "{" in uri:
                self.mcp.resources.add_template(models.ResourceTemplate(
                    uri_template=uri, name=label, title=title, description=text, mime_type=mime_type),
                    reader, completer)
            else:
                self.mcp.resources.add(models.Resource(uri=uri, name=label, title=title, description=text,
                                                       mime_type=mime_type), reader)
            return function

        return register

    def prompt(self, name: str | None = None, *, description: str | None = None, title: str | None = None,
               completer: Completer | None = None) -> Callable[[Handler], Handler]:
        """Decorator: a prompt whose parameters are its string arguments (`Annotated[str, "description"]`
        describes one); it returns text or messages. `completer(argument, value, context)` offers values."""
        def register(function: Handler) -> Handler:
            self.mcp.prompts.prompt(name, description=description, title=title,
                                    completer=completer)(as_async(function))
            return function

        return register


def as_async(function: Handler) -> Callable[..., Awaitable[Any]]:
    """`function` itself when it is async; else an async function with its signature that runs it in a
    worker thread."""
    if inspect.iscoroutinefunction(function):
        return function

    @functools.wraps(function)
    async def in_a_thread(*args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(functools.partial(function, *args, **kwargs))

    return in_a_thread
