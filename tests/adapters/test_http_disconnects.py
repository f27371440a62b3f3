"""`disconnects.unless_gone`: a request's work stops when its client leaves, told apart from any other
cancellation, with the protocol's callback (`HttpRequest.on_client_gone`, called by uvicorn_fence) or, without it, a
watcher on `receive`. The live test through the real protocol is test_http_rest.py's
`test_a_rest_call_whose_client_leaves_is_cancelled`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hexmcp.adapters.http.disconnects import GONE, unless_gone
from hexmcp.adapters.http.request import HttpRequest


def _request(fenced: bool) -> HttpRequest:
    """A request as uvicorn_fence makes it (`watched`), or as the app makes one for any other server."""
    return HttpRequest({"type": "http", "headers": []}, watched=fenced)


def _connection_lost(request: HttpRequest) -> None:
    """What uvicorn_fence's connection_lost does to the request being answered."""
    request.client_left = True
    if request.on_client_gone is not None:
        request.on_client_gone()


def _receive_until(gone: asyncio.Event) -> Any:
    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    return receive


async def _blocked(record: list[str]) -> str:
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        record.append("cancelled")
        raise
    return "never"


async def _answer() -> str:
    await asyncio.sleep(0)
    return "answer"


@pytest.mark.parametrize("fenced", [True, False], ids=["protocol-callback", "receive-watcher"])
def test_work_finishing_first_gives_its_result(fenced: bool) -> None:
    async def main() -> Any:
        request = _request(fenced)
        result = await unless_gone(request, _receive_until(asyncio.Event()), lambda _task: _answer())
        assert request.on_client_gone is None  # nothing left registered for a later request
        return result

    assert asyncio.run(main()) == "answer"


@pytest.mark.parametrize("fenced", [True, False], ids=["protocol-callback", "receive-watcher"])
def test_a_client_leaving_first_stops_the_work(fenced: bool) -> None:
    record: list[str] = []

    async def main() -> Any:
        request = _request(fenced)
        gone = asyncio.Event()
        served = asyncio.ensure_future(unless_gone(request, _receive_until(gone), lambda _task: _blocked(record)))
        await asyncio.sleep(0.01)
        if fenced:
            _connection_lost(request)
        else:
            gone.set()
        return await served

    assert asyncio.run(main()) is GONE
    assert record == ["cancelled"]


@pytest.mark.parametrize("client_left_too", [False, True])
def test_another_cancellation_still_cancels_the_request(client_left_too: bool) -> None:
    """Shutdown cancelling the request's task is not mistaken for the client leaving, even when both happen."""
    record: list[str] = []

    async def main() -> None:
        request = _request(fenced=True)
        served = asyncio.ensure_future(unless_gone(request, _receive_until(asyncio.Event()), lambda _task: _blocked(record)))
        await asyncio.sleep(0.01)
        if client_left_too:
            _connection_lost(request)
        served.cancel()
        with pytest.raises(asyncio.CancelledError):
            await served

    asyncio.run(main())
    assert record == ["cancelled"]


def test_a_client_that_left_before_the_work_began_gets_no_work_done() -> None:
    """The connection was lost before the request registered its callback: the protocol set `client_left`."""
    record: list[str] = []

    async def work() -> str:
        record.append("ran")
        return "answer"

    async def main() -> Any:
        request = _request(fenced=True)
        _connection_lost(request)
        return await unless_gone(request, _receive_until(asyncio.Event()), lambda _task: work())

    assert asyncio.run(main()) is GONE
    assert record == []


@pytest.mark.parametrize("fenced", [True, False], ids=["protocol-callback", "receive-watcher"])
def test_the_work_is_told_the_task_it_runs_in(fenced: bool) -> None:
    """Fenced, the work runs in the request's own task and is told so (its deadline needs no lookup);
    with a watcher it gets a task of its own, which `start` is not told (None)."""

    async def main() -> tuple[Any, Any, Any]:
        request = _request(fenced)
        told: list[Any] = []

        async def work() -> Any:
            return asyncio.current_task()

        def start(task: Any) -> Any:
            told.append(task)
            return work()

        ran_in = await unless_gone(request, _receive_until(asyncio.Event()), start)
        return told[0], ran_in, asyncio.current_task()

    told, ran_in, request_task = asyncio.run(main())
    if fenced:
        assert told is request_task and ran_in is request_task
    else:
        assert told is None and ran_in is not request_task
