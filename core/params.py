"""Request params as attrs classes, structured strictly from the wire.

A failed structure becomes `invalid_params` with the JSON path of the first problem
(`$.arguments.text`), via cattrs' `transform_error`.
"""

from __future__ import annotations

import re
import typing
from typing import Any, Literal, get_args

import attrs
import cattrs
from cattrs.errors import ClassValidationError
from cattrs.v import format_exception

from .convert import structure_converter
from .errors import ErrorCode, ProtocolError
from .models import Implementation

LoggingLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LOG_LEVELS: tuple[str, ...] = get_args(LoggingLevel)  # least to most severe


@attrs.frozen(kw_only=True)
class InitializeParams:
    protocol_version: str
    capabilities: dict[str, Any]
    client_info: Implementation


@attrs.frozen(kw_only=True)
class PaginatedParams:
    cursor: str | None = None


# Built on every tools/call, positionally (`parse_params`): define's __init__ costs half of frozen's, and
# keywords would cost a dict per call. Never changed.
@attrs.define
class CallToolParams:
    name: str
    arguments: dict[str, Any] | None = None
    input_responses: dict[str, Any] | None = None
    request_state: str | None = None


@attrs.frozen(kw_only=True)
class ResourceParams:
    uri: str


@attrs.frozen(kw_only=True)
class GetPromptParams:
    name: str
    arguments: dict[str, str] | None = None
    input_responses: dict[str, Any] | None = None
    request_state: str | None = None


@attrs.frozen(kw_only=True)
class CompletionArgument:
    name: str
    value: str


@attrs.frozen(kw_only=True)
class CompletionContext:
    arguments: dict[str, str] | None = None


@attrs.frozen(kw_only=True)
class CompleteParams:
    ref: dict[str, Any]
    argument: CompletionArgument
    context: CompletionContext | None = None


@attrs.frozen(kw_only=True)
class SetLevelParams:
    level: LoggingLevel


@attrs.frozen(kw_only=True)
class CancelledParams:
    request_id: str | int | None = None
    reason: str | None = None


@attrs.frozen(kw_only=True)
class SubscriptionFilter:
    tools_list_changed: bool | None = None
    prompts_list_changed: bool | None = None
    resources_list_changed: bool | None = None
    resource_subscriptions: list[str] | None = None
    task_ids: list[str] | None = None  # the tasks extension: notifications/tasks for these tasks


@attrs.frozen(kw_only=True)
class ListenParams:
    notifications: SubscriptionFilter


@attrs.frozen(kw_only=True)
class NoParams:
    pass


def _install_hooks() -> None:
    def structure_request_id(value: Any, _type: Any) -> str | int | None:
        if value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        raise TypeError("expected a string or an integer request id")

    request_id_type = str | int | None
    structure_converter.register_structure_hook_func(lambda t: t == request_id_type, structure_request_id)


_install_hooks()


def _wire_path(problem: str) -> str:
    """cattrs names attributes (`$.request_id`); the client wrote wire names (`$.requestId`)."""
    message, at, path = problem.rpartition(" @ ")
    if not at:
        return problem
    return f"{message} @ " + re.sub(r"_([a-z])", lambda m: m.group(1).upper(), path)


def _problem(exc: BaseException, wanted: Any) -> str:
    """cattrs' wording of one problem, but a value outside a Literal says which values there are: cattrs
    words it "unknown error (X not in literal typing.Literal[...])", Python's notation and not the protocol's."""
    if typing.get_origin(wanted) is Literal:
        return "expected one of " + ", ".join(repr(choice) for choice in typing.get_args(wanted))
    problem = format_exception(exc, wanted)
    return "invalid value" if problem.startswith("unknown error") else problem


_STR = frozenset({str})  # every key a str, tested in C (a generator would resume a frame per key)


def parse_params(params: Any, cls: type) -> Any:
    """Structure `params` into `cls`, or raise `ProtocolError(invalid_params)` saying where and why."""
    if params is None:
        params = {}
    elif cls is CallToolParams and type(params) is dict:
        # The common `tools/call` params (a name, arguments as an object or absent, nothing else the class
        # reads) without cattrs' generated function: type tests instead of a structure walk, on every call.
        # Anything else goes to cattrs, which structures it (and explains, when it is wrong).
        name = params.get("name")
        arguments = params.get("arguments")
        if (type(name) is str and (arguments is None or type(arguments) is dict) and "inputResponses" not in params
                and "requestState" not in params and (not arguments or _STR.issuperset(map(type, arguments)))):
            return CallToolParams(name, arguments)
    if not isinstance(params, dict):
        raise ProtocolError(ErrorCode.INVALID_PARAMS, "params must be an object",
                            {"path": "$", "problem": f"expected object, got {type(params).__name__}"})
    try:
        return structure_converter.structure(params, cls)
    except (ClassValidationError, cattrs.BaseValidationError) as exc:
        problems = [_wire_path(p) for p in cattrs.transform_error(exc, path="$", format_exception=_problem)]
        first = problems[0] if problems else "invalid params"
        raise ProtocolError(ErrorCode.INVALID_PARAMS, f"Invalid params: {first}",
                            {"problems": problems}) from None
    except (TypeError, ValueError) as exc:
        raise ProtocolError(ErrorCode.INVALID_PARAMS, f"Invalid params: {exc}") from None
