"""Request/response correlation over any wire: ids, timeouts, cancellation, progress, notifications.

The one place the client turns JSON-RPC into awaitable calls (what python-sdk's jsonrpc_dispatcher is to
its transports). It reads messages with `hexmcp.wire.jsonrpc.classify`, the same sans-IO framing
the server uses, and never touches a socket: the `Wire` does.

- A request that outlives its timeout, or whose caller is cancelled, is followed by
  `notifications/cancelled` so the server stops working on it; the caller gets `ClientErrorCode.TIMEOUT`.
- `notifications/progress` goes to the callback registered for its token; other notifications go to
  the handlers registered for their method, then to the catch-all ones (`"*"`). A request returns only
  once its progress callbacks have finished, async ones included: a gateway relaying progress
  downstream must not answer before the last progress it received has gone out, even when the
  upstream's last progress and its answer arrived in one read.
- Requests from the server are answered: `ping` with `{}`, a method with a registered handler with its
  result, anything else with -32601 (this client declares no sampling, elicitation or roots capability
  unless a handler for it is registered).
"""

from __future__ import annotations

import asyncio
import inspect
from collections import defaultdict
from typing import Any, Awaitable, Callable

import structlog

from hexmcp.wire import jsonrpc
from hexmcp.wire.deadlines import Deadlines
from hexmcp.wire.pending import PendingRequests

from .errors import ClientError, ClientErrorCode
from .transports.base import Wire

log = structlog.get_logger("hexmcp.client")

ProgressCallback = Callable[[float, float | None, str | None], Any]
NotificationHandler = Callable[[str, Any], Any]
RequestHandler = Callable[[Any], Awaitable[dict[str, Any]] | dict[str, Any]]
ALL = "*"


class Dispatcher:
    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self._pending = PendingRequests()
        self._progress: dict[Any, ProgressCallback] = {}
        self._progress_runs: dict[Any, list[asyncio.Task[Any]]] = defaultdict(list)  # async callbacks, by token
        self._handlers: dict[str, list[NotificationHandler]] = defaultdict(list)
        self._request_handlers: dict[str, RequestHandler] = {"ping": lambda params: {}}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed: ClientError | None = None
        self._deadlines = Deadlines()
        # Streaming wires can write a message without awaiting (base.py, `write_now`); the others only send.
        self._write_now: Callable[[dict[str, Any]], bool] | None = getattr(wire, "write_now", None)
        self.lost = asyncio.Event()  # set when the connection ends (streaming wires) or the client closes

    # --- registration ----------------------------------------------------------------------------

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        """Call `handler(method, params)` for every notification `method` (`"*"`: every notification)."""
        self._handlers[method].append(handler)

    def on_request(self, method: str, handler: RequestHandler) -> None:
        """Answer the server's `method` requests with `handler(params)`'s result."""
        self._request_handlers[method] = handler

    # --- outbound --------------------------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any], *, timeout: float | None,
                      progress: ProgressCallback | None = None) -> dict[str, Any]:
        if self._closed is not None:
            raise ClientError(self._closed.code, self._closed.message, delivered=False)
        request_id, future = self._pending.open()
        if progress is not None:
            meta = {**(params.get("_meta") or {}), "progressToken": request_id}
            params = {**params, "_meta": meta}
            self._progress[request_id] = progress
        message = jsonrpc.encode_request(request_id, method, params, with_version=self.wire.with_version)
        try:
            if self._write_now is not None and self._write_now(message):
                # Written already: the server is at work while the deadline is armed (nothing is awaited in
                # between, so the answer cannot have been read yet); the shared timer fails the future itself.
                deadline = self._deadlines.watch(future, timeout) if timeout is not None else None
                response = await future
                if self._progress_runs.get(request_id):
                    async with asyncio.timeout_at(deadline):
                        await asyncio.wait(self._progress_runs[request_id])
            else:  # a send that waits (flow control) or carries the whole exchange (HTTP): the deadline cuts it
                response = await self._deadlines.run(self._exchange(message, future), seconds=timeout)
        except TimeoutError:
            self._spawn(self._cancel(request_id, f"timed out after {timeout} s"))
            raise ClientError(ClientErrorCode.TIMEOUT, f"{method} got no answer within {timeout} s") from None
        except asyncio.CancelledError:
            self._spawn(self._cancel(request_id, "cancelled by the caller"))
            raise
        finally:
            self._deadlines.forget(future)
            self._pending.close(request_id)
            self._progress.pop(request_id, None)
            self._progress_runs.pop(request_id, None)
        if response.error is not None:
            raise ClientError.from_rpc_error(response.error)
        if not isinstance(response.result, dict):
            raise ClientError(ClientErrorCode.INCOMPATIBLE, f"the result of {method} is not an object")
        return response.result

    async def _exchange(self, message: dict[str, Any], future: asyncio.Future[jsonrpc.Response]) -> jsonrpc.Response:
        """Send, then wait for the answer and its progress callbacks: all of it under the request's deadline."""
        await self.wire.send(message)
        response = await future
        runs = self._progress_runs.get(message["id"])
        if runs:
            await asyncio.wait(runs)
        return response

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self.wire.send(jsonrpc.encode_notification(method, params or {}, with_version=self.wire.with_version))

    async def _cancel(self, request_id: jsonrpc.RequestId, reason: str) -> None:
        if self._closed is not None:
            return
        try:
            await self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})
        except ClientError as error:  # the wire is gone: nothing is running there to cancel
            log.debug("cancellation not delivered", request_id=request_id, error=error.message)

    # --- inbound (called by the wire) --------------------------------------------------------------

    def receive(self, value: Any) -> None:
        message = jsonrpc.classify(value, require_jsonrpc=self.wire.require_jsonrpc)
        if isinstance(message, jsonrpc.Response):
            if not self._pending.resolve(message):
                log.debug("answer to no pending request", id=message.id)
        elif isinstance(message, jsonrpc.Notification):
            self._notification(message.method, message.params)
        elif isinstance(message, jsonrpc.Request):
            self._spawn(self._answer(message))
        else:
            error = ClientError(ClientErrorCode.INCOMPATIBLE, f"the server's answer is not JSON-RPC: {message.message}")
            if message.id is None or not self._pending.fail(message.id, error):
                log.warning("unreadable message from the server", reason=message.message)

    def closed(self, error: ClientError) -> None:
        """The connection ended: fail everything waiting, and every later request, with `error`."""
        if self._closed is None:
            self._closed = error
        self.lost.set()
        self._pending.fail_all(error)

    def _notification(self, method: str, params: Any) -> None:
        if method == "notifications/progress" and isinstance(params, dict):
            token = params.get("progressToken")
            callback = self._progress.get(token)
            if callback is not None:
                run = self._run(callback, params.get("progress"), params.get("total"), params.get("message"))
                if run is not None:
                    self._progress_runs[token].append(run)
        for handler in (*self._handlers.get(method, ()), *self._handlers.get(ALL, ())):
            self._run(handler, method, params)

    async def _answer(self, request: jsonrpc.Request) -> None:
        handler = self._request_handlers.get(request.method)
        with_version = self.wire.with_version
        if handler is None:
            answer = jsonrpc.encode_error(request.id, jsonrpc.METHOD_NOT_FOUND,
                                          f"this client does not handle {request.method}", with_version=with_version)
        else:
            try:
                result = handler(request.params)
                if inspect.isawaitable(result):
                    result = await result
                answer = jsonrpc.encode_result(request.id, result, with_version=with_version)
            except Exception as error:  # a handler's bug: the server gets an error, the client goes on
                log.exception("request handler failed", method=request.method)
                answer = jsonrpc.encode_error(request.id, jsonrpc.INTERNAL_ERROR,
                                              f"the client failed to handle {request.method}: {type(error).__name__}",
                                              with_version=with_version)
        try:
            await self.wire.send(answer)
        except ClientError as error:
            log.debug("answer not delivered", method=request.method, error=error.message)

    def _run(self, callback: Callable[..., Any], *args: Any) -> asyncio.Task[Any] | None:
        """Call a handler; an async one runs on as a task, which is returned."""
        try:
            result = callback(*args)
        except Exception:  # a handler's bug must not break the connection that delivered the message
            log.exception("notification handler failed")
            return None
        return self._spawn(result) if inspect.isawaitable(result) else None

    def _spawn(self, work: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def drain(self) -> None:
        """Wait for background sends (cancellations, answers) to finish, before the wire closes."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=2)
