"""Prompts: named templates that render to messages, with optional argument completion."""

from __future__ import annotations

import inspect
import typing
from typing import Any, Awaitable, Callable, ContextManager

import attrs

from . import models
from .context import ToolContext
from .errors import ErrorCode, ProtocolError
from .list_changes import ListChanges

Renderer = Callable[..., Awaitable[Any]]
Completer = Callable[[str, str, dict[str, str]], Awaitable[list[str]]]


@attrs.frozen(kw_only=True)
class RegisteredPrompt:
    definition: models.Prompt
    renderer: Renderer
    wants_context: bool
    completer: Completer | None


def as_messages(value: Any) -> list[models.PromptMessage]:
    if isinstance(value, str):
        return [models.PromptMessage(role="user", content=models.TextContent(text=value))]
    return list(value)


def _arguments_of(function: Renderer) -> list[models.PromptArgument]:
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except NameError:  # an annotation only a type checker resolves: arguments without descriptions, as ever
        hints = {}
    return [models.PromptArgument(name=p.name, description=_description(hints.get(p.name)),
                                  required=p.default is inspect.Parameter.empty)
            for p in inspect.signature(function).parameters.values() if p.name != "ctx"]


def _description(hint: Any) -> str | None:
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    return next((a for a in typing.get_args(hint)[1:] if isinstance(a, str)), None)


class PromptRegistry:
    def __init__(self) -> None:
        self._prompts: dict[str, RegisteredPrompt] = {}
        self._changes = ListChanges(self.definitions)
        self.listeners = self._changes.listeners  # called when the listed prompts change (once per `batch()`)

    def batch(self) -> ContextManager[None]:
        """Add or drop many prompts, tell the listeners once (one list_changed, not one per prompt)."""
        return self._changes.batch()

    def add(self, prompt: models.Prompt, renderer: Renderer, completer: Completer | None = None) -> None:
        wants_context = "ctx" in inspect.signature(renderer).parameters
        previous = self._prompts.get(prompt.name)
        self._prompts[prompt.name] = RegisteredPrompt(definition=prompt, renderer=renderer,
                                                      wants_context=wants_context, completer=completer)
        if previous is None or previous.definition != prompt:
            self._changes.changed()

    def remove(self, name: str) -> None:
        """Drop a prompt (one a mounted upstream no longer offers); listeners hear of it only if it was there."""
        if self._prompts.pop(name, None) is not None:
            self._changes.changed()

    def prompt(self, name: str | None = None, *, description: str | None = None, title: str | None = None,
               completer: Completer | None = None) -> Callable[[Renderer], Renderer]:
        """Decorator: every parameter but `ctx` becomes a string argument; those without defaults are required,
        and `Annotated[str, "description"]` describes one."""

        def register(function: Renderer) -> Renderer:
            arguments = _arguments_of(function)
            self.add(models.Prompt(name=name or function.__name__, title=title,
                                   description=description or inspect.getdoc(function),
                                   arguments=arguments or None), function, completer)
            return function

        return register

    def definitions(self) -> list[models.Prompt]:
        return [p.definition for p in self._prompts.values()]

    def get(self, name: str) -> RegisteredPrompt:
        prompt = self._prompts.get(name)
        if prompt is None:
            raise ProtocolError(ErrorCode.INVALID_PARAMS, f"Unknown prompt: {name}", {"path": "$.name"})
        return prompt

    async def render(self, name: str, arguments: dict[str, str], ctx: ToolContext) -> models.GetPromptResult:
        prompt = self.get(name)
        missing = [a.name for a in prompt.definition.arguments or [] if a.required and a.name not in arguments]
        if missing:
            raise ProtocolError(ErrorCode.INVALID_PARAMS,
                                f"Missing required argument(s) for prompt '{name}': {', '.join(missing)}",
                                {"path": f"$.arguments.{missing[0]}"})
        known = {a.name for a in prompt.definition.arguments or []}
        kwargs: dict[str, Any] = {k: v for k, v in arguments.items() if k in known}
        if prompt.wants_context:
            kwargs["ctx"] = ctx
        value = await prompt.renderer(**kwargs)
        if isinstance(value, models.GetPromptResult):
            return value
        return models.GetPromptResult(messages=as_messages(value), description=prompt.definition.description)
