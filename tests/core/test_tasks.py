"""The tasks extension driven through the core with no wire: creation, polling, questions, cancellation,
ownership across sessions, the per-client bound and expiry."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hexmcp.core import (TASKS_EXTENSION, ErrorCode, LongRunning, McpServer, ProtocolError, Rejection, TaskLimits,
                         ToolContext)
from hexmcp.core.tasks.runner import internal_error_wire
from hexmcp.core.tasks.model import REQUIRED_CAPABILITY, TaskStatus

from ..support.peer import CoreClient, stateless_meta

pytestmark = pytest.mark.anyio

WITH_TASKS = {"extensions": {TASKS_EXTENSION: {}}, "elicitation": {}}
NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}
ELICIT_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


class Counter:
    """Work a test can watch: a tool adds one per step until it is stopped."""

    def __init__(self) -> None:
        self.steps = 0
        self.release = asyncio.Event()


def build_server(counter: Counter, limits: TaskLimits | None = None, clock: Any = None) -> McpServer:
    server = McpServer("tasks-test", "0")
    if limits is not None or clock is not None:
        from hexmcp.core.tasks.runner import TaskRunner

        server.tasks = TaskRunner(limits=limits, **({"clock": clock} if clock else {}))
    tools = server.tools

    async def count(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        for _ in range(arguments.get("steps", 1_000_000)):
            counter.steps += 1
            await ctx.report_progress(counter.steps, message="counting")
            await asyncio.sleep(0.005)
        return f"counted {counter.steps}"

    async def gated(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        await counter.release.wait()
        return "released"

    async def ask(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answers = await ctx.ask({"a": ("elicitation", {"message": "a?", "requestedSchema": ELICIT_SCHEMA}),
                                 "b": ("elicitation", {"message": "b?", "requestedSchema": ELICIT_SCHEMA})})
        return f"answers: {sorted(answers)}"

    async def broken(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, "broken at the protocol level")

    async def ask_then_task(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        answer = await ctx.elicit({"message": "name?", "requestedSchema": ELICIT_SCHEMA}, key="name")
        if arguments.get("quick"):
            return "done before any task"
        await ctx.begin_task()
        return f"task for {answer['content']['ok']}"

    tools.add("ask_then_task", ask_then_task, description="asks, then becomes a task",
              input_schema={"type": "object", "properties": {"quick": {"type": "boolean"}}},
              long_running=LongRunning(inputs_first=True))
    count_schema = {"type": "object", "properties": {"steps": {"type": "integer"}}}
    tools.add("count", count, description="counts", input_schema=count_schema, long_running=True)
    tools.add("gated", gated, description="waits", input_schema=NO_ARGS, long_running=True)
    tools.add("ask", ask, description="asks", input_schema=NO_ARGS, long_running=True)
    tools.add("broken", broken, description="fails", input_schema=NO_ARGS, long_running=True)
    tools.add("only_task", gated, description="needs a task", input_schema=NO_ARGS,
              long_running=LongRunning(required=True))
    return server


@pytest.fixture
def counter() -> Counter:
    return Counter()


def call(name: str, capabilities: dict[str, Any] | None = None, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments, "_meta": stateless_meta(capabilities=capabilities)}


def task_params(task_id: str, capabilities: dict[str, Any] | None = WITH_TASKS, **extra: Any) -> dict[str, Any]:
    return {"taskId": task_id, "_meta": stateless_meta(capabilities=capabilities), **extra}


async def poll(client: CoreClient, task_id: str, until: set[str] | None = None) -> dict[str, Any]:
    until = until or {s.value for s in TaskStatus if s.value in ("completed", "failed", "cancelled")}
    for _ in range(2000):
        task = await client.ok("tasks/get", task_params(task_id))
        if task["status"] in until:
            return task
        await asyncio.sleep(0.005)
    raise AssertionError(f"task {task_id} never reached {until}")


async def test_a_declaring_client_gets_a_task_and_polls_it_to_its_result(counter: Counter) -> None:
    client = CoreClient(build_server(counter))
    created = await client.ok("tools/call", call("count", WITH_TASKS, steps=3))
    assert created["resultType"] == "task" and created["status"] == "working"
    assert not {"result", "error", "inputRequests", "requestState"} & created.keys()
    done = await poll(client, created["taskId"])
    assert done["status"] == "completed" and done["resultType"] == "complete"
    assert done["result"]["content"][0]["text"] == "counted 3"
    assert isinstance(done["ttlMs"], int) and isinstance(done["pollIntervalMs"], int)


async def test_progress_shows_as_the_status_message(counter: Counter) -> None:
    client = CoreClient(build_server(counter))
    created = await client.ok("tools/call", call("count", WITH_TASKS))
    task = await client.ok("tasks/get", task_params(created["taskId"]))
    for _ in range(200):
        if task.get("statusMessage"):
            break
        await asyncio.sleep(0.005)
        task = await client.ok("tasks/get", task_params(created["taskId"]))
    assert task["statusMessage"].startswith("counting (")
    await client.ok("tasks/cancel", task_params(created["taskId"]))


async def test_without_the_extension_the_call_is_synchronous(counter: Counter) -> None:
    client = CoreClient(build_server(counter))
    result = await client.ok("tools/call", call("count", {}, steps=2))
    assert result["resultType"] == "complete" and "taskId" not in result


async def test_a_tool_that_needs_a_task_refuses_a_client_without_the_extension(counter: Counter) -> None:
    client = CoreClient(build_server(counter))
    rejection = await client.rejected("tools/call", call("only_task", {}))
    assert rejection.code is ErrorCode.MISSING_CLIENT_CAPABILITY
    assert rejection.data == REQUIRED_CAPABILITY


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
async def test_task_methods_need_the_extension(counter: Counter, method: str) -> None:
    client = CoreClient(build_server(counter))
    rejection = await client.rejected(method, task_params("anything", capabilities={}, inputResponses={}))
    assert rejection.code is ErrorCode.MISSING_CLIENT_CAPABILITY


async def test_cancel_stops_the_work(counter: Counter) -> None:
    client = CoreClient(build_server(counter))
    created = await client.ok("tools/call", call("count", WITH_TASKS))
    while counter.steps < 5:
        await asyncio.sleep(0.005)
    ack = await client.ok("tasks/cancel", task_params(created["taskId"]))
    assert ack["resultType"] == "complete" and not {"taskId", "status"} & ack.keys()
    final = await poll(client, created["taskId"])
    assert final["status"] == "cancelled"
    stopped_at = counter.steps
    await asyncio.sleep(0.1)
    assert counter.steps == stopped_at, "the work went on after its task was cancelled"


async def test_questions_park_the_task_until_every_answer_came(counter: Counter) -> None:
    client = CoreClient(build_server(counter))
    created = await client.ok("tools/call", call("ask", WITH_TASKS))
    waiting = await poll(client, created["taskId"], {"input_required"})
    assert set(waiting["inputRequests"]) == {"a", "b"}
    assert waiting["inputRequests"]["a"]["method"] == "elicitation/create"
    accepted = {"action": "accept", "content": {}}
    await client.ok("tasks/update", task_params(created["taskId"], inputResponses={"a": accepted, "zz": accepted}))
    # Straight after the ack, with no time for the task to run: the answered key is gone already.
    partial = await client.ok("tasks/get", task_params(created["taskId"]))
    assert partial["status"] == "input_required" and set(partial["inputRequests"]) == {"b"}
    await client.ok("tasks/update", task_params(created["taskId"], inputResponses={"b": {"not": "an answer"}}))
    still = await client.ok("tasks/get", task_params(created["taskId"]))
    assert still["status"] == "input_required" and set(still["inputRequests"]) == {"b"}
    await client.ok("tasks/update", task_params(created["taskId"], inputResponses={"b": accepted}))
    done = await poll(client, created["taskId"])
    assert done["result"]["content"][0]["text"] == "answers: ['a', 'b']"


async def test_a_protocol_error_fails_the_task_with_the_installed_error_wire(counter: Counter) -> None:
    server = build_server(counter)
    client = CoreClient(server)
    created = await client.ok("tools/call", call("broken", WITH_TASKS))
    failed = await poll(client, created["taskId"])
    assert failed["status"] == "failed" and "result" not in failed
    # With no transport adapter installed, the error is JSON-RPC's internal error naming the semantic code.
    assert failed["error"]["code"] == internal_error_wire(_rejection())["code"]
    assert failed["error"]["data"]["errorCode"] == ErrorCode.INVALID_PARAMS.value
    assert failed["statusMessage"] == "broken at the protocol level"


async def test_refused_arguments_of_a_task_call_are_an_is_error_result(counter: Counter) -> None:
    """SEP-1303 on 2026-07-28: the schema refuses before any task is made, so the call answers the isError
    result itself; a tool's own refusal (a path under $.arguments) after its task began completes the task
    with that result instead of failing it."""
    server = build_server(counter)

    async def picky(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, "argument name: no such name", {"path": "$.arguments.name"})

    server.tools.add("picky", picky, description="refuses its name", input_schema=NO_ARGS, long_running=True)
    client = CoreClient(server)
    refused = await client.ok("tools/call", call("count", WITH_TASKS, steps="three"))
    assert refused["resultType"] == "complete" and refused["isError"] is True, refused
    assert refused["_meta"]["io.hexmcp/errorData"]["path"] == "$.arguments.steps" and counter.steps == 0
    created = await client.ok("tools/call", call("picky", WITH_TASKS))
    assert created["resultType"] == "task"
    done = await poll(client, created["taskId"])
    assert done["status"] == "completed" and done["result"]["isError"] is True, done
    assert done["result"]["content"][0]["text"].startswith("argument name: no such name (eventId ")
    assert done["result"]["_meta"]["io.hexmcp/errorCode"] == ErrorCode.INVALID_PARAMS.value


def _rejection() -> Rejection:
    return Rejection(code=ErrorCode.INTERNAL_ERROR, message="", event_id="e")


async def test_the_task_belongs_to_the_client_not_the_connection(counter: Counter) -> None:
    server = build_server(counter)
    first = CoreClient(server, session_id="s1")
    first.session.client_id = "alice"
    created = await first.ok("tools/call", call("gated", WITH_TASKS))
    again = CoreClient(server, session_id="s2")
    again.session.client_id = "alice"
    stranger = CoreClient(server, session_id="s3")
    stranger.session.client_id = "mallory"
    assert (await again.ok("tasks/get", task_params(created["taskId"])))["taskId"] == created["taskId"]
    for method in ("tasks/get", "tasks/cancel"):
        rejection = await stranger.rejected(method, task_params(created["taskId"]))
        assert rejection.code is ErrorCode.INVALID_PARAMS
    counter.release.set()
    assert (await poll(again, created["taskId"]))["status"] == "completed"


async def test_unfinished_tasks_per_client_are_bounded(counter: Counter) -> None:
    server = build_server(counter, TaskLimits(max_active_per_client=2))
    alice = CoreClient(server, session_id="a")
    for _ in range(2):
        await alice.ok("tools/call", call("gated", WITH_TASKS))
    rejection = await alice.rejected("tools/call", call("gated", WITH_TASKS))
    assert rejection.code is ErrorCode.SERVER_BUSY
    bob = CoreClient(server, session_id="b")
    assert (await bob.ok("tools/call", call("gated", WITH_TASKS)))["resultType"] == "task"
    counter.release.set()
    await asyncio.sleep(0.05)
    assert (await alice.ok("tools/call", call("gated", WITH_TASKS)))["resultType"] == "task"


async def test_a_finished_task_is_kept_for_its_ttl_then_forgotten(counter: Counter) -> None:
    now = [1_000.0]
    server = build_server(counter, TaskLimits(ttl_ms=60_000), clock=lambda: now[0])
    client = CoreClient(server)
    counter.release.set()
    created = await client.ok("tools/call", call("gated", WITH_TASKS))
    done = await poll(client, created["taskId"])
    now[0] += done["ttlMs"] / 1000 - 1
    assert (await client.ok("tasks/get", task_params(created["taskId"])))["status"] == "completed"
    now[0] += 2
    assert (await client.rejected("tasks/get", task_params(created["taskId"]))).code is ErrorCode.INVALID_PARAMS


async def test_removed_methods_are_not_found(counter: Counter) -> None:
    client = CoreClient(build_server(counter))
    for method in ("tasks/result", "tasks/list"):
        assert (await client.rejected(method, task_params("x"))).code is ErrorCode.METHOD_NOT_FOUND


async def test_discover_advertises_the_extension(counter: Counter) -> None:
    client = CoreClient(build_server(counter))
    result = await client.ok("server/discover", {"_meta": stateless_meta()})
    assert result["capabilities"]["extensions"] == {TASKS_EXTENSION: {}}


async def test_a_listener_hears_each_status_of_its_client_tasks(counter: Counter) -> None:
    server = build_server(counter)
    client = CoreClient(server)
    client.peer.version = "2026-07-28"
    created = await client.ok("tools/call", call("gated", WITH_TASKS))
    listen = asyncio.ensure_future(client.ok("subscriptions/listen", {
        "notifications": {"taskIds": [created["taskId"], "not-a-task"]}, "_meta": stateless_meta(capabilities=WITH_TASKS)},
        key="listen-1"))
    for _ in range(200):
        if client.peer.notified("notifications/subscriptions/acknowledged"):
            break
        await asyncio.sleep(0.005)
    [ack] = client.peer.notified("notifications/subscriptions/acknowledged")
    assert ack["notifications"]["taskIds"] == [created["taskId"]], "only the client's own live tasks are agreed"
    counter.release.set()
    for _ in range(200):
        if client.peer.notified("notifications/tasks"):
            break
        await asyncio.sleep(0.005)
    [heard] = client.peer.notified("notifications/tasks")
    assert heard["taskId"] == created["taskId"] and heard["status"] == "completed"
    assert heard["result"]["content"][0]["text"] == "released"
    await client.session.close()
    await listen


async def test_listening_for_tasks_needs_the_extension(counter: Counter) -> None:
    client = CoreClient(build_server(counter))
    rejection = await client.rejected("subscriptions/listen", {"notifications": {"taskIds": ["x"]},
                                                               "_meta": stateless_meta(capabilities={})})
    assert rejection.code is ErrorCode.MISSING_CLIENT_CAPABILITY


async def test_an_inputs_first_tool_asks_by_round_trip_then_becomes_a_task(counter: Counter) -> None:
    client = CoreClient(build_server(counter))
    first = await client.ok("tools/call", call("ask_then_task", WITH_TASKS))
    assert first["resultType"] == "input_required" and "taskId" not in first
    answered = {**call("ask_then_task", WITH_TASKS), "requestState": first["requestState"],
                "inputResponses": {"name": {"action": "accept", "content": {"ok": True}}}}
    created = await client.ok("tools/call", answered)
    assert created["resultType"] == "task" and "requestState" not in created
    assert (await poll(client, created["taskId"]))["result"]["content"][0]["text"] == "task for True"
    quick = {**answered, "arguments": {"quick": True}}
    assert (await client.ok("tools/call", quick))["content"][0]["text"] == "done before any task"
