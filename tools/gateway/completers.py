"""Argument completion (MCP `completion/complete`) for category names, model names and document ids.

MCP's `completion/complete` suggests values for a prompt's or a resource template's argument while a
user types; it is not text generation (that is routeCompletion). Matching: names that start
with what was typed first, then names that contain it, each case-insensitively and in their own order.
"""

from __future__ import annotations

from typing import Awaitable, Callable, Iterable

Values = Callable[[], Awaitable[Iterable[str]]]
Completer = Callable[[str, str, dict[str, str]], Awaitable[list[str]]]


def matching(candidates: Iterable[str], typed: str) -> list[str]:
    needle = typed.casefold()
    unique = list(dict.fromkeys(candidates))
    starts = [c for c in unique if c.casefold().startswith(needle)]
    contains = [c for c in unique if needle in c.casefold() and not c.casefold().startswith(needle)]
    return starts + contains


def completer(sources: dict[str, Values]) -> Completer:
    """A completer for the arguments named in `sources` (each with where its values come from); any
    other argument gets no suggestions."""

    async def complete(argument: str, typed: str, context: dict[str, str]) -> list[str]:
        source = sources.get(argument)
        return matching(await source(), typed) if source is not None else []

    return complete
