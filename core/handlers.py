"""The method handlers: what each MCP method does, and `ROUTES`, the table from method to handler.

A handler gets the `Session` serving the request, its params already parsed into their attrs type, and
the `Call` (version, request key, capabilities, ...); it returns a result model, which the session
shapes for the request's version. Admission (lifecycle, era, which routes exist) is the session's job,
not theirs. `McpServer.add_method` adds extension methods to a server's copy of this table.
"""

from __future__ import annotations

from typing import Any

import structlog

from . import argument_refusals, models, subscription_limits, versions
from .tasks import calls as task_calls, methods as task_methods
from .context import InputNeeded, ToolContext
from .echo import TOOL_FAILURE_CHARS, clip_text
from .errors import ErrorCode, ProtocolError, ToolError
from .ids import new_event_id
from .meta import META_ERROR_CODE, META_EVENT_ID
from .pagination import page
from .params import (CallToolParams, CompleteParams, GetPromptParams, InitializeParams, ListenParams, NoParams,
                     PaginatedParams, ResourceParams, SetLevelParams)
from .routing import Call, Route
from .session import Session
from .tools import NOT_COMPILED, OutputSchemaViolation, RegisteredTool, ToolAnswer, to_call_result

log = structlog.get_logger("hexmcp.core")


async def _initialize(session: Session, params: InitializeParams, call: Call) -> models.InitializeResult:
    version = versions.negotiate_handshake_version(params.protocol_version)
    session.version = version
    session.client_capabilities = params.capabilities
    session.client_info = params.client_info
    log.info("session initialized", requested=params.protocol_version, negotiated=version,
             client=params.client_info.name)
    return models.InitializeResult(protocol_version=version, capabilities=session.server.capabilities(version),
                                   server_info=session.server.info, instructions=session.server.instructions)


async def _discover(session: Session, params: NoParams, call: Call) -> models.DiscoverResult:
    server = session.server
    return models.DiscoverResult(supported_versions=list(versions.SUPPORTED_VERSIONS),
                                 capabilities=server.capabilities(call.version), instructions=server.instructions)


async def _ping(session: Session, params: NoParams, call: Call) -> models.EmptyResult:
    return models.EmptyResult()


async def _list_tools(session: Session, params: PaginatedParams, call: Call) -> models.ListToolsResult:
    tools, cursor = page(session.server.tools.definitions(), params.cursor, session.server.options.page_size)
    return models.ListToolsResult(tools=tools, next_cursor=cursor)


async def _call_tool(session: Session, params: CallToolParams, call: Call) -> Any:
    server = session.server
    tool = server.tools.get(params.name)
    if tool is None:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, f"Unknown tool: {params.name}",
                            {"path": "$.name", "tool": params.name})
    arguments = params.arguments or {}
    check = tool.quick_check  # `check_arguments`' fast "valid" written out; it compiles the check on a first call
    if check is NOT_COMPILED or check is None or not check(arguments):  # type: ignore[operator]
        try:
            tool.check_arguments(arguments)
        except ProtocolError as refused:
            return _refused_arguments(refused, session, call, tool)
    # A handshake version gathers no answers: `_gathered_answers` checks requestState on the others.
    answers = {} if versions.FEATURES[call.version].handshake else _gathered_answers(
        session, params, call, "tools/call", params.name)
    # A tool that never reads its context (and is no task, whose channel lives there) is handed none.
    ctx = session.context(call, answers) if tool.takes_context or tool.long_running is not None else None
    try:
        if tool.long_running is not None and task_calls.wanted(tool.long_running, call):
            assert ctx is not None  # a long-running tool is always handed its context (above)
            return await task_calls.call_as_task(session, call, ctx, tool.long_running,
                                                 lambda: run_tool(session, tool, arguments, ctx), tool.definition.name)
        # `run_tool` written out for the common call, the server's hottest path, instead of awaited.
        try:
            # `ctx` is None for a tool that takes no context (the handler's type says ToolContext)
            value = await session.run_cancellable(call, tool.handler(arguments, ctx))  # type: ignore[arg-type]
            return ToolAnswer(value) if type(value) is str else to_call_result(value, tool)  # positional: no kwargs dict
        except (InputNeeded, ProtocolError):
            raise
        except Exception as error:
            return _failed_call(session, tool, error)
    except InputNeeded as need:
        return _input_required(session, need, "tools/call", params.name)
    except ProtocolError as refused:  # the tool's own (or an inputs-first task's, before it began)
        return _refused_arguments(refused, session, call, tool)


def _refused_arguments(refused: ProtocolError, session: Session, call: Call, tool: RegisteredTool) -> Any:
    """An argument refusal as a result from 2025-11-25 on (SEP-1303, `argument_refusals`); else raised on.
    Caught off the valid call's path: the check's slow path and an except clause of the existing `try`."""
    if argument_refusals.answered_as_result(refused, call.version, session.transport):
        return argument_refusals.refusal_result(refused, tool.definition.name)
    raise refused


async def run_tool(session: Session, tool: RegisteredTool, arguments: dict[str, Any], ctx: ToolContext | None,
                   call: Call | None = None) -> models.CallToolResult | ToolAnswer:
    """Run a tool and turn how it ended into a result: its failures become `isError` results, a protocol
    error or a question for the client (`InputNeeded`) goes up. Under `call`, the request's cancellation
    and the tool timeout apply; without it (a task's work), only `tasks/cancel` stops it."""
    try:
        work = tool.handler(arguments, ctx)  # type: ignore[arg-type]
        value = await (session.run_cancellable(call, work) if call is not None else work)
        return to_call_result(value, tool)
    except (InputNeeded, ProtocolError):
        raise
    except Exception as error:
        return _failed_call(session, tool, error)


def _failed_call(session: Session, tool: RegisteredTool, error: Exception) -> models.CallToolResult:
    """How a tool's failure (raised by it, or found in its result) reaches the client: an `isError` result."""
    name = tool.definition.name
    if isinstance(error, ToolError):  # its text may quote the arguments (a path nobody has): bounded
        return _tool_failure(clip_text(str(error), TOOL_FAILURE_CHARS), name)
    if isinstance(error, TimeoutError):
        return _tool_failure(f"The tool '{name}' timed out after {session.server.options.tool_timeout_s} s.", name)
    if isinstance(error, OutputSchemaViolation):
        return _tool_failure(f"The tool '{name}' produced a result that does not match its output schema.",
                             name, detail=str(error))
    return _tool_failure(f"The tool '{name}' failed unexpectedly.", name, with_traceback=True)


def _gathered_answers(session: Session, params: Any, call: Call, method: str, name: str) -> dict[str, Any]:
    if versions.features(call.version).handshake:
        return {}
    answers = session.server.sealer.open(params.request_state, method, name) if params.request_state else {}
    answers.update(params.input_responses or {})
    return answers


def _input_required(session: Session, need: InputNeeded, method: str, name: str) -> models.InputRequiredResult:
    return models.InputRequiredResult(input_requests=need.requests,
                                      request_state=session.server.sealer.seal(need.answers, method, name))


def _tool_failure(message: str, tool: str, *, detail: str | None = None,
                  with_traceback: bool = False) -> models.CallToolResult:
    event_id = new_event_id()
    if with_traceback:
        log.exception("tool failed", tool=tool, code=ErrorCode.TOOL_EXECUTION_FAILED.value, eventId=event_id)
    else:
        log.warning("tool failed", tool=tool, code=ErrorCode.TOOL_EXECUTION_FAILED.value, reason=detail or message,
                    eventId=event_id)
    return models.CallToolResult(content=[models.TextContent(text=f"{message} (eventId {event_id})")], is_error=True,
                                 meta={META_EVENT_ID: event_id, META_ERROR_CODE: ErrorCode.TOOL_EXECUTION_FAILED.value})


async def _list_resources(session: Session, params: PaginatedParams, call: Call) -> models.ListResourcesResult:
    items, cursor = page(session.server.resources.definitions(), params.cursor, session.server.options.page_size)
    return models.ListResourcesResult(resources=items, next_cursor=cursor)


async def _list_templates(session: Session, params: PaginatedParams, call: Call) -> models.ListResourceTemplatesResult:
    items, cursor = page(session.server.resources.template_definitions(), params.cursor,
                         session.server.options.page_size)
    return models.ListResourceTemplatesResult(resource_templates=items, next_cursor=cursor)


async def _read_resource(session: Session, params: ResourceParams, call: Call) -> models.ReadResourceResult:
    return await session.run_cancellable(call, session.server.resources.read(params.uri))


async def _subscribe(session: Session, params: ResourceParams, call: Call) -> models.EmptyResult:
    subscription_limits.admit_subscription(session.subscriptions, params.uri, session.server.options)
    session.subscriptions.add(params.uri)
    return models.EmptyResult()


async def _unsubscribe(session: Session, params: ResourceParams, call: Call) -> models.EmptyResult:
    session.subscriptions.discard(params.uri)
    return models.EmptyResult()


async def _list_prompts(session: Session, params: PaginatedParams, call: Call) -> models.ListPromptsResult:
    items, cursor = page(session.server.prompts.definitions(), params.cursor, session.server.options.page_size)
    return models.ListPromptsResult(prompts=items, next_cursor=cursor)


async def _get_prompt(session: Session, params: GetPromptParams, call: Call) -> Any:
    answers = _gathered_answers(session, params, call, "prompts/get", params.name)
    ctx = session.context(call, answers)
    try:
        return await session.run_cancellable(call, session.server.prompts.render(params.name, params.arguments or {},
                                                                                 ctx))
    except InputNeeded as need:
        return _input_required(session, need, "prompts/get", params.name)


async def _complete(session: Session, params: CompleteParams, call: Call) -> models.CompleteResult:
    ref_type = params.ref.get("type")
    server = session.server
    if ref_type == "ref/prompt":
        completer = server.prompts.get(str(params.ref.get("name"))).completer
    elif ref_type == "ref/resource":
        completer = server.resources.completer_for(str(params.ref.get("uri")))
    else:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, f"Unknown completion reference type: {ref_type!r}",
                            {"path": "$.ref.type"})
    values: list[str] = []
    if completer is not None:
        context_arguments = (params.context.arguments if params.context else None) or {}
        values = await completer(params.argument.name, params.argument.value, context_arguments)
    shown = values[:100]
    return models.CompleteResult(completion=models.Completion(values=shown, total=len(values),
                                                              has_more=len(values) > len(shown)))


async def _set_level(session: Session, params: SetLevelParams, call: Call) -> models.EmptyResult:
    session.log_level = params.level
    return models.EmptyResult()


async def _listen(session: Session, params: ListenParams, call: Call) -> models.SubscriptionsListenResult:
    """2026-07-28: hold the request open and stream what the client opted in to, until it ends."""
    subscription_limits.check_listen(params.notifications.resource_subscriptions, session.server.options)
    wanted = await task_methods.agreed_task_ids(session, call, params.notifications)
    subscription = session.server.subscriptions.open(session.peer, call.request_key, wanted)
    session.listening.add(call.request_key)
    try:
        await session.peer.notify("notifications/subscriptions/acknowledged", subscription.acknowledgement(),
                                  related=call.request_key)
        await session.run_cancellable(call, session.closed.wait())
    finally:
        session.listening.discard(call.request_key)
        session.server.subscriptions.close(subscription)
    return models.SubscriptionsListenResult(meta=subscription.meta())


ROUTES: dict[str, Route] = {
    "initialize": Route(handler=_initialize, params=InitializeParams, stateless=False),
    "server/discover": Route(handler=_discover, params=NoParams, handshake=False),
    "ping": Route(handler=_ping, params=NoParams, stateless=False),
    "tools/list": Route(handler=_list_tools, params=PaginatedParams),
    "tools/call": Route(handler=_call_tool, params=CallToolParams),
    "resources/list": Route(handler=_list_resources, params=PaginatedParams),
    "resources/templates/list": Route(handler=_list_templates, params=PaginatedParams),
    "resources/read": Route(handler=_read_resource, params=ResourceParams),
    "resources/subscribe": Route(handler=_subscribe, params=ResourceParams, stateless=False),
    "resources/unsubscribe": Route(handler=_unsubscribe, params=ResourceParams, stateless=False),
    "prompts/list": Route(handler=_list_prompts, params=PaginatedParams),
    "prompts/get": Route(handler=_get_prompt, params=GetPromptParams),
    "completion/complete": Route(handler=_complete, params=CompleteParams),
    "logging/setLevel": Route(handler=_set_level, params=SetLevelParams, stateless=False),
    "subscriptions/listen": Route(handler=_listen, params=ListenParams, handshake=False),
    **task_methods.ROUTES,
}
