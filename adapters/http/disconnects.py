"""Noticing that a client has gone while its request is still being worked on.

Two ways: a watcher task reading `receive()` for `http.disconnect` (`until_done_or_gone`: long-lived
streams, and any server but ours), or, under hexmcp's own uvicorn protocol, a callback the protocol
calls when the connection is lost (`unless_gone`): the request runs in its own task, with no second
task, no third watching both, and no `asyncio.wait`, which cost more than a trivial tool's whole answer.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, TypeVar

from .asgi import Receive
from .request import HttpRequest

T = TypeVar("T")

GONE: Any = object()
"""What `unless_gone` returns when the client left first (its work was stopped)."""


async def wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def until_done_or_gone(work: asyncio.Future[Any], receive: Receive, *, keepalive_s: float | None = None,
                             keepalive: Callable[[], Awaitable[None]] | None = None) -> bool:
    """Wait for `work` unless the client disconnects first (True: the work finished).

    With `keepalive`, it is awaited every `keepalive_s` of silence, so long-lived streams stay open
    through proxies.
    """
    gone = asyncio.ensure_future(wait_disconnect(receive))
    try:
        while True:
            done, _ = await asyncio.wait({work, gone}, timeout=keepalive_s if keepalive else None,
                                         return_when=asyncio.FIRST_COMPLETED)
            if work in done:
                return True
            if gone in done:
                return False
            await keepalive()  # type: ignore[misc]
    finally:
        gone.cancel()


async def unless_gone(request: HttpRequest, receive: Receive,
                      start: Callable[[asyncio.Task[Any] | None], Awaitable[T]]) -> T:
    """The result of the work `start(task)` begins, or GONE when the client disconnects first: the work is
    then cancelled. `start` is told the task the work runs in (the request's own, so a deadline need not
    look it up), or None when it gets a task of its own; it is not called at all for a client already gone."""
    if not request.watched:  # not under our protocol (`uvicorn_fence`): a task watches `receive`
        future = asyncio.ensure_future(start(None))
        if not await until_done_or_gone(future, receive):
            future.cancel()
            return GONE  # type: ignore[no-any-return]
        return future.result()
    if request.client_left:  # the connection was lost before this request started its work
        return GONE  # type: ignore[no-any-return]
    task = request.serving_task()
    assert task is not None
    left = False

    def on_gone() -> None:
        nonlocal left
        left = True
        task.cancel()

    cancelling = task.cancelling()
    request.on_client_gone = on_gone
    try:
        return await start(task)
    except asyncio.CancelledError:
        # Told apart from any other cancellation (shutdown) as `asyncio.timeout` does it.
        if left and task.uncancel() <= cancelling:
            return GONE  # type: ignore[no-any-return]
        raise
    finally:
        request.on_client_gone = None
