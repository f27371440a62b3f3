"""What the audit trail says about each request, driven through the core with the demo server's tools:
fields, redaction at any depth, result digests, eventIds shared with the client's error, refusals,
every method (not only tools/call), arguments kept whole and replayable, ended tasks, salted clients."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.adapters.audit import DEFAULT_REDACTED, AuditFile, AuditLog, ClientIds, Redaction
from hexmcp.adapters.audit.reader import BadLine, NotReplayable, read_trail, replay_request
from hexmcp.adapters.audit.record import REDACTED
from hexmcp.adapters.limits import BucketRate, RateLimiter, RateLimits
from hexmcp.core import ErrorCode, LongRunning, ProtocolError
from hexmcp.core.observation import OUTCOME_CANCELLED, OUTCOME_ERROR, OUTCOME_OK, OUTCOME_TOOL_ERROR
from tests.fixtures.demo_server import build_demo_server

from ..support.peer import CoreClient, stateless_meta

pytestmark = pytest.mark.anyio

VERSIONS = {"model": "minilm@abc-c4-int8", "index": "ix-1"}
SALT = b"a-test-salt-of-at-least-16-bytes"


def _records(path: Path) -> list[dict[str, Any]]:
    entries = list(read_trail(path))
    assert not [e for e in entries if isinstance(e, BadLine)]
    return entries  # type: ignore[return-value]


def _calls(path: Path) -> list[dict[str, Any]]:
    return [r for r in _records(path) if r.get("method") == "tools/call"]


def _sha256_of_canonical(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def _salted(identity: str) -> str:
    return hmac.new(SALT, identity.encode(), hashlib.sha256).hexdigest()[:32]


def _audit(tmp_path: Path) -> AuditLog:
    return AuditLog(AuditFile(tmp_path / "audit.log"), Redaction.with_defaults(["note"]), lambda: VERSIONS,
                    clients=ClientIds(SALT))


async def _client(tmp_path: Path, *observers: Any) -> tuple[CoreClient, AuditLog]:
    server = build_demo_server()
    audit = _audit(tmp_path)
    server.add_observer(audit)
    server.on_task_change(audit.task_changed)
    for observer in observers:
        server.add_observer(observer)
    client = CoreClient(server)
    await client.initialize()
    return client, audit


async def test_one_line_per_tool_call_with_its_facts(tmp_path: Path) -> None:
    client, audit = await _client(tmp_path)
    result = await client.ok("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    failed = await client.ok("tools/call", {"name": "fail", "arguments": {}})
    rejection = await client.rejected("tools/call", {"name": "nope", "arguments": {}})
    ok, tool_error, error = _calls(tmp_path / "audit.log")
    assert (ok["tool"], ok["outcome"], ok["errorCode"]) == ("echo", OUTCOME_OK, None)
    assert ok["params"] == {"name": "echo", "arguments": {"text": "hi"}}
    assert ok["resultDigest"] == _sha256_of_canonical(result)
    assert ok["sessionId"] == "test" and ok["traceId"] and ok["versions"] == VERSIONS
    assert ok["durationMs"] >= 0 and ok["time"].endswith("Z") and ok["eventId"].startswith("ev-")
    assert tool_error["outcome"] == OUTCOME_TOOL_ERROR and tool_error["resultDigest"] == _sha256_of_canonical(failed)
    # A protocol error: the eventId the client was given, so a user can quote it to the operator.
    assert error["outcome"] == OUTCOME_ERROR and error["eventId"] == rejection.event_id
    assert error["errorCode"] == rejection.code.value
    assert error["resultDigest"] is None
    assert len({ok["eventId"], tool_error["eventId"], error["eventId"]}) == 3


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_an_argument_refusal_is_counted_invalid_params_whatever_its_form(tmp_path: Path, version: str) -> None:
    """-32602 up to 2025-06-18, an isError result from 2025-11-25 on (SEP-1303): the line says
    `invalid_params` either way, with the eventId the client was given."""
    server = build_demo_server()
    audit = _audit(tmp_path)
    server.add_observer(audit)
    client = CoreClient(server)
    await client.initialize(version)
    refusal = await client.refused_arguments({"name": "echo", "arguments": {"text": 5}})
    [line] = _calls(tmp_path / "audit.log")
    assert line["outcome"] == (OUTCOME_TOOL_ERROR if version == "2025-11-25" else OUTCOME_ERROR)
    assert line["errorCode"] == ErrorCode.INVALID_PARAMS.value and line["eventId"] == refusal.event_id


async def test_every_method_gets_a_line_not_only_tools_call(tmp_path: Path) -> None:
    """Issue 30: resources/read, prompts/get, lists and pings left no trace before."""
    client, audit = await _client(tmp_path)
    await client.ok("tools/list")
    await client.ok("resources/read", {"uri": "demo://greeting"})
    await client.ok("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
    await client.ok("ping")
    lines = _records(tmp_path / "audit.log")
    assert [line["method"] for line in lines] == ["initialize", "tools/list", "resources/read", "prompts/get", "ping"]
    read, prompt = lines[2], lines[3]
    assert read["target"] == "demo://greeting" and read["params"] == {"uri": "demo://greeting"}
    assert prompt["target"] == "greet" and prompt["params"]["arguments"] == {"name": "Ada"}
    assert all(line["kind"] == "request" and line["outcome"] == OUTCOME_OK for line in lines)


async def test_requests_the_core_refuses_at_admission_get_a_line(tmp_path: Path) -> None:
    """An unknown method, or one before initialize, never reached an observer's request_started."""
    server = build_demo_server()
    server.add_observer(_audit(tmp_path))
    client = CoreClient(server)
    early = await client.rejected("tools/list")  # before initialize
    await client.initialize()
    unknown = await client.rejected("no/such", {"x": 1})
    first, _initialize, second = _records(tmp_path / "audit.log")
    assert (first["kind"], first["method"], first["eventId"]) == ("refusal", "tools/list", early.event_id)
    assert (second["method"], second["params"], second["errorCode"]) == ("no/such", {"x": 1},
                                                                          ErrorCode.METHOD_NOT_FOUND.value)
    assert second["eventId"] == unknown.event_id and second["outcome"] == OUTCOME_ERROR


async def test_client_ids_are_salted_hmacs_that_correlate_but_do_not_reveal(tmp_path: Path) -> None:
    server = build_demo_server()
    server.add_observer(_audit(tmp_path))
    token_digest = "token:" + hashlib.sha256(b"s3cret-token").hexdigest()[:16]  # what the transport hands over
    for _ in range(2):
        client = CoreClient(server)
        client.session.client_id = token_digest
        await client.initialize()
    lines = _records(tmp_path / "audit.log")
    assert {line["client"] for line in lines} == {"token:" + _salted(token_digest)}  # one client, two sessions
    raw = (tmp_path / "audit.log").read_text()
    assert token_digest.split(":")[1] not in raw and hashlib.sha256(b"s3cret-token").hexdigest() not in raw
    other = ClientIds(b"another-deployment-salt-16b+")
    assert other.of(token_digest) != ClientIds(SALT).of(token_digest)  # the salt is what makes it


async def test_secret_looking_fields_are_redacted_at_any_depth(tmp_path: Path) -> None:
    client, _ = await _client(tmp_path)
    arguments = {"text": "x", "apiKey": "k", "nested": [{"Authorization": "Bearer z", "max_tokens": 5}],
                 "config": {"db_password": "p", "note": "operator-configured", "access_token": "t"}}
    await client.request("tools/call", {"name": "echo", "arguments": arguments})
    [line] = _calls(tmp_path / "audit.log")
    assert line["params"]["arguments"] == {"text": "x", "apiKey": REDACTED,
                                           "nested": [{"Authorization": REDACTED, "max_tokens": 5}],
                                           "config": {"db_password": REDACTED, "note": REDACTED,
                                                      "access_token": REDACTED}}
    raw = (tmp_path / "audit.log").read_text()
    assert "Bearer z" not in raw and "operator-configured" not in raw
    with pytest.raises(NotReplayable, match="redacted at .*apiKey"):
        replay_request(line)


async def test_arguments_over_8_kib_are_kept_whole_and_replay_to_the_identical_request(tmp_path: Path) -> None:
    """Issue 30: arguments over 8 KiB were a digest, so the call could not be replayed."""
    client, _ = await _client(tmp_path)
    params = {"name": "echo", "arguments": {"text": "y" * 20_000 + "\u00e9\U0001f600"}}
    await client.ok("tools/call", params, key=41)
    [line] = _calls(tmp_path / "audit.log")
    assert replay_request(line) == {"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": params}


async def test_calls_the_rate_limiter_refuses_are_in_the_trail(tmp_path: Path) -> None:
    limiter = RateLimiter(RateLimits(tools={"echo": BucketRate(rate=0.001, burst=1)}))
    client, _ = await _client(tmp_path, limiter)
    await client.ok("tools/call", {"name": "echo", "arguments": {"text": "1"}})
    refused = await client.rejected("tools/call", {"name": "echo", "arguments": {"text": "2"}})
    first, second = _calls(tmp_path / "audit.log")
    assert first["outcome"] == OUTCOME_OK
    assert second["errorCode"] == ErrorCode.RATE_LIMITED.value and second["eventId"] == refused.event_id


def _tasks_server(tmp_path: Path) -> tuple[Any, AuditLog]:
    server = build_demo_server()
    release = asyncio.Event()

    @server.tool(long_running=LongRunning())
    async def long_job(outcome: str) -> str:
        await release.wait()
        if outcome == "fail":  # a protocol error fails the task (a tool's own failure completes it, isError)
            raise ProtocolError(ErrorCode.INVALID_PARAMS, "no such outcome")
        return f"done: {outcome}"

    audit = _audit(tmp_path)
    server.add_observer(audit)
    server.on_task_change(audit.task_changed)
    server.release = release  # type: ignore[attr-defined]
    return server, audit


def _task_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    meta = stateless_meta(capabilities={"extensions": {"io.modelcontextprotocol/tasks": {}}})
    return {"name": name, "arguments": arguments, "_meta": meta}


async def _until_ended(path: Path, count: int) -> list[dict[str, Any]]:
    for _ in range(200):
        ended = [r for r in _records(path) if r["kind"] == "task"]
        if len(ended) >= count:
            return ended
        await asyncio.sleep(0.01)
    raise AssertionError(f"fewer than {count} task lines: {_records(path)}")


async def test_a_task_logs_its_creation_and_how_it_ended(tmp_path: Path) -> None:
    """Issue 30: a task logged its creation (the tools/call line), never its result."""
    server, _ = _tasks_server(tmp_path)
    client = CoreClient(server)
    ok = await client.ok("tools/call", _task_call("long_job", {"outcome": "fine"}))
    failing = await client.ok("tools/call", _task_call("long_job", {"outcome": "fail"}))
    cancelled = await client.ok("tools/call", _task_call("long_job", {"outcome": "never"}))
    meta = _task_call("x", {})["_meta"]
    await client.ok("tasks/cancel", {"taskId": cancelled["taskId"], "_meta": meta})
    await _until_ended(tmp_path / "audit.log", 1)  # the cancellation, before the others may finish
    server.release.set()
    ended = {line["taskId"]: line for line in await _until_ended(tmp_path / "audit.log", 3)}
    created = {line["taskId"]: line for line in _calls(tmp_path / "audit.log")}
    assert set(created) == set(ended) == {ok["taskId"], failing["taskId"], cancelled["taskId"]}
    done, failed, stopped = ended[ok["taskId"]], ended[failing["taskId"]], ended[cancelled["taskId"]]
    assert (done["status"], done["outcome"], done["errorCode"]) == ("completed", OUTCOME_OK, None)
    assert done["resultDigest"].startswith("sha256:") and done["durationMs"] >= 0
    assert (failed["status"], failed["outcome"], failed["errorCode"]) == ("failed", OUTCOME_ERROR,
                                                                           ErrorCode.INVALID_PARAMS.value)
    assert failed["eventId"] == failed["error"]["data"]["eventId"]  # the id the client reads from tasks/get
    assert (stopped["status"], stopped["outcome"]) == ("cancelled", OUTCOME_CANCELLED)
    # The ended task's line carries the creating request's session and trace ids, and its client.
    assert done["traceId"] == created[ok["taskId"]]["traceId"] and done["client"] == created[ok["taskId"]]["client"]
    assert [r["method"] for r in _records(tmp_path / "audit.log") if r["kind"] == "request"].count("tasks/cancel") == 1


async def test_task_lines_survive_a_change_of_task_store(tmp_path: Path) -> None:
    from hexmcp.core.tasks.memory_store import MemoryTaskStore

    server, _ = _tasks_server(tmp_path)
    server.use_task_store(MemoryTaskStore())  # what --task-store does after the audit may be installed
    created = await CoreClient(server).ok("tools/call", _task_call("long_job", {"outcome": "fine"}))
    server.release.set()
    [ended] = await _until_ended(tmp_path / "audit.log", 1)
    assert ended["taskId"] == created["taskId"] and ended["status"] == "completed"


async def test_a_failing_versions_provider_or_disk_never_costs_the_answer(tmp_path: Path) -> None:
    server = build_demo_server()

    def broken() -> dict[str, Any]:
        raise RuntimeError("index reloading")

    file = AuditFile(tmp_path / "audit.log")
    audit = AuditLog(file, Redaction.with_defaults(), broken, clients=ClientIds(SALT))
    server.add_observer(audit)
    client = CoreClient(server)
    await client.initialize()
    await client.ok("tools/call", {"name": "echo", "arguments": {"text": "a"}})
    assert _calls(tmp_path / "audit.log")[0]["versions"] == {}
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
