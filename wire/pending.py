"""Requests one end of the wire sent the other, waiting for their answers: ids and the futures they complete.

Both ends use it: the client for every request it makes, the server for the requests it sends its client
(sampling, elicitation, roots). Whoever reads an answer hands it to `resolve`, on whatever pipe it came back
(the same one on stdio and WebSocket, another POST on HTTP); what a caller does while it waits (a
deadline, a cancellation, progress) is its own business.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets

from .jsonrpc import RequestId, Response


class PendingRequests:
    def __init__(self, id_prefix: str | None = None, *, unguessable: bool = False) -> None:
        """Ids are 1, 2, 3...; with `id_prefix`, strings (`"s-1"`: the server's, never confused with the
        client's own ids in logs). `unguessable`: the prefix and 128 random bits instead of a count, for a
        table several clients answer into (whoever knows an id may answer its request)."""
        self._prefix = id_prefix
        self._numbers = itertools.count(1)
        self._unguessable = unguessable
        self._waiting: dict[RequestId, asyncio.Future[Response]] = {}

    def open(self) -> tuple[RequestId, asyncio.Future[Response]]:
        """A fresh id, and the future its answer will complete; waiting until `close(id)`."""
        request_id: RequestId
        if self._unguessable:
            request_id = f"{self._prefix or ''}{secrets.token_urlsafe(16)}"
        else:
            number = next(self._numbers)
            request_id = number if self._prefix is None else f"{self._prefix}{number}"
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        return request_id, future

    def close(self, request_id: RequestId) -> None:
        """The request is over (answered, timed out, cancelled): a later answer to it is unknown."""
        self._waiting.pop(request_id, None)

    def resolve(self, response: Response) -> bool:
        """Hand an answer to the request waiting for it; False when none is (an unknown or late id)."""
        future = self._still_waiting(response.id)
        if future is not None:
            future.set_result(response)
        return future is not None

    def fail(self, request_id: RequestId, error: BaseException) -> bool:
        """Fail the request waiting under this id (its answer came unreadable); False when none is."""
        future = self._still_waiting(request_id)
        if future is not None:
            future.set_exception(error)
        return future is not None

    def _still_waiting(self, request_id: RequestId) -> asyncio.Future[Response] | None:
        future = self._waiting.get(request_id)
        return None if future is None or future.done() else future

    def fail_all(self, error: BaseException) -> None:
        """No answer can come any more (the input closed, the session ended): every waiting request fails."""
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(error)
