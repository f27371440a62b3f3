"""What the audit trail says about each tool call, driven through the core with the demo server's tools:
fields, redaction at any depth, result digests, eventIds shared with the client's error, refusals."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.adapters.audit import DEFAULT_REDACTED, AuditFile, AuditLog, Redaction
from hexmcp.adapters.audit.reader import BadLine, read_trail
from hexmcp.adapters.audit.record import MAX_ARGUMENTS_BYTES, REDACTED
from hexmcp.adapters.limits import BucketRate, RateLimiter, RateLimits
from hexmcp.core import ErrorCode
from hexmcp.core.observation import OUTCOME_ERROR, OUTCOME_OK, OUTCOME_TOOL_ERROR
from tests.fixtures.demo_server import build_demo_server

from ..support.peer import CoreClient

pytestmark = pytest.mark.anyio

VERSIONS = {"model": "minilm@abc-c4-int8", "index": "ix-1"}


def _records(path: Path) -> list[dict[str, Any]]:
    entries = list(read_trail(path))
    assert not [e for e in entries if isinstance(e, BadLine)]
    return entries  # type: ignore[return-value]


def _sha256_of_canonical(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


async def _client(tmp_path: Path, *observers: Any) -> tuple[CoreClient, AuditLog]:
    server = build_demo_server()
    audit = AuditLog(AuditFile(tmp_path / "audit.log"), Redaction.with_defaults(["note"]), lambda: VERSIONS)
    server.add_observer(audit)
    for observer in observers:
        server.add_observer(observer)
    client = CoreClient(server)
    await client.initialize()
    return client, audit


async def test_one_line_per_tool_call_with_its_facts(tmp_path: Path) -> None:
    client, audit = await _client(tmp_path)
    result = await client.ok("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    await client.ok("tools/list")  # not a tool call: not in the trail
    failed = await client.ok("tools/call", {"name": "fail", "arguments": {}})
    rejection = await client.rejected("tools/call", {"name": "nope", "arguments": {}})
    ok, tool_error, error = _records(tmp_path / "audit.log")
    assert audit.lines == 3
    assert (ok["tool"], ok["outcome"], ok["errorCode"]) == ("echo", OUTCOME_OK, None)
    assert ok["arguments"] == {"text": "hi"} and ok["resultDigest"] == _sha256_of_canonical(result)
    assert ok["sessionId"] == "test" and ok["traceId"] and ok["client"] == "test" and ok["versions"] == VERSIONS
    assert ok["durationMs"] >= 0 and ok["time"].endswith("Z") and ok["eventId"].startswith("ev-")
    assert tool_error["outcome"] == OUTCOME_TOOL_ERROR and tool_error["resultDigest"] == _sha256_of_canonical(failed)
    # A protocol error: the eventId the client was given, so a user can quote it to the operator.
    assert error["outcome"] == OUTCOME_ERROR and error["eventId"] == rejection.event_id
    assert error["errorCode"] == rejection.code.value
    assert error["resultDigest"] is None
    assert len({ok["eventId"], tool_error["eventId"], error["eventId"]}) == 3


async def test_secret_looking_fields_are_redacted_at_any_depth(tmp_path: Path) -> None:
    client, _ = await _client(tmp_path)
    arguments = {"text": "x", "apiKey": "k", "nested": [{"Authorization": "Bearer z", "max_tokens": 5}],
                 "config": {"db_password": "p", "note": "operator-configured", "access_token": "t"}}
    await client.request("tools/call", {"name": "echo", "arguments": arguments})
    [line] = _records(tmp_path / "audit.log")
    assert line["arguments"] == {"text": "x", "apiKey": REDACTED,
                                 "nested": [{"Authorization": REDACTED, "max_tokens": 5}],
                                 "config": {"db_password": REDACTED, "note": REDACTED, "access_token": REDACTED}}
    raw = (tmp_path / "audit.log").read_text()
    assert "Bearer z" not in raw and "operator-configured" not in raw


async def test_huge_arguments_are_logged_as_their_size_and_digest(tmp_path: Path) -> None:
    client, _ = await _client(tmp_path)
    await client.ok("tools/call", {"name": "echo", "arguments": {"text": "y" * (MAX_ARGUMENTS_BYTES * 2)}})
    [line] = _records(tmp_path / "audit.log")
    assert line["arguments"]["omitted"] == "too large" and line["arguments"]["bytes"] > MAX_ARGUMENTS_BYTES
    assert line["arguments"]["digest"] == _sha256_of_canonical({"text": "y" * (MAX_ARGUMENTS_BYTES * 2)})


async def test_calls_the_rate_limiter_refuses_are_in_the_trail(tmp_path: Path) -> None:
    limiter = RateLimiter(RateLimits(tools={"echo": BucketRate(rate=0.001, burst=1)}))
    client, _ = await _client(tmp_path, limiter)
    await client.ok("tools/call", {"name": "echo", "arguments": {"text": "1"}})
    refused = await client.rejected("tools/call", {"name": "echo", "arguments": {"text": "2"}})
    first, second = _records(tmp_path / "audit.log")
    assert first["outcome"] == OUTCOME_OK
    assert second["errorCode"] == ErrorCode.RATE_LIMITED.value and second["eventId"] == refused.event_id


async def test_a_failing_versions_provider_or_disk_never_costs_the_answer(tmp_path: Path) -> None:
    server = build_demo_server()

    def broken() -> dict[str, Any]:
        raise RuntimeError("index reloading")

    file = AuditFile(tmp_path / "audit.log")
    audit = AuditLog(file, Redaction.with_defaults(), broken)
    server.add_observer(audit)
    client = CoreClient(server)
    await client.initialize()
    await client.ok("tools/call", {"name": "echo", "arguments": {"text": "a"}})
    assert _records(tmp_path / "audit.log")[0]["versions"] == {}
    file.close()
    file._fd = 10**6  # a descriptor that is not open: the next append fails with EBADF
    assert (await client.ok("tools/call", {"name": "echo", "arguments": {"text": "b"}}))["content"][0]["text"] == "b"
    assert audit.failures == 1


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                        max_size=4), max_leaves=20)
secret_keys = st.sampled_from([*DEFAULT_REDACTED, "API-KEY", "clientSecret", "X_Token", "Password"])


def _plant(value: Any, key: str, path: list[int]) -> Any:
    """`value` with a {key: "SECRET"} object placed somewhere inside (or around) it."""
    if isinstance(value, dict) and path:
        first = next(iter(value), None)
        if first is not None and not Redaction.with_defaults().hides(first):
            return {**value, first: _plant(value[first], key, path[1:])}
    if isinstance(value, list) and value and path:
        index = path[0] % len(value)
        return [*value[:index], _plant(value[index], key, path[1:]), *value[index + 1:]]
    return {"wrapped": value, key: "SECRET"}


def _secrets_left(value: Any) -> int:
    if isinstance(value, dict):
        return sum(1 for item in value.values() if item == "SECRET") + sum(_secrets_left(v) for v in value.values())
    if isinstance(value, list):
        return sum(_secrets_left(v) for v in value)
    return 0


@given(json_values, secret_keys, st.lists(st.integers(0, 3), max_size=4))
def test_no_planted_secret_survives_and_nothing_else_changes(value: Any, key: str, path: list[int]) -> None:
    redaction = Redaction.with_defaults()
    planted = _plant(value, key, path)
    redacted = redaction.apply(planted)
    assert _secrets_left(redacted) == 0
    assert _keys(redacted) == _keys(planted)  # the shape is kept: only values go
    if not any(redaction.hides(k) for k in _keys(value)):
        assert redaction.apply(value) == value


def _keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [*value, *(k for v in value.values() for k in _keys(v))]
    if isinstance(value, list):
        return [k for v in value for k in _keys(v)]
    return []
