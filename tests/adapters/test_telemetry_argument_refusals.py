"""An argument refusal answered as an isError result (2025-11-25 on, SEP-1303) stays in the -32602 series
operators count (error.type), while the wire truth (a result: no rpc.response.status_code) is kept."""

from __future__ import annotations

from hexmcp.adapters.telemetry import conventions
from hexmcp.core import ErrorCode, Ok, Rejection
from hexmcp.core.meta import META_ERROR_CODE, META_EVENT_ID
from hexmcp.core.observation import OUTCOME_ERROR, OUTCOME_TOOL_ERROR, observed_outcome


def _tool_error(code: str) -> Ok:
    return Ok(result={"content": [{"type": "text", "text": "no (eventId ev-1)"}], "isError": True,
                      "_meta": {META_EVENT_ID: "ev-1", META_ERROR_CODE: code}})


def test_a_refusal_as_a_result_and_as_an_error_share_error_type() -> None:
    as_result = observed_outcome(_tool_error(ErrorCode.INVALID_PARAMS.value), 0.001)
    as_error = observed_outcome(Rejection(code=ErrorCode.INVALID_PARAMS, message="no", event_id="ev-2"), 0.001)
    assert (as_result.outcome, as_result.error_code, as_result.event_id) == (OUTCOME_TOOL_ERROR,
                                                                            ErrorCode.INVALID_PARAMS, "ev-1")
    assert as_error.outcome == OUTCOME_ERROR
    assert conventions.error_type(as_result) == conventions.error_type(as_error) == "-32602"
    assert conventions.status_code(as_result) == "" and conventions.status_code(as_error) == "-32602"


def test_a_tool_failure_stays_a_plain_tool_error() -> None:
    failed = observed_outcome(_tool_error(ErrorCode.TOOL_EXECUTION_FAILED.value), 0.001)
    assert failed.error_code is None
    assert conventions.error_type(failed) == conventions.TOOL_ERROR and conventions.status_code(failed) == ""
