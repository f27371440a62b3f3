"""The stdio adapter through its real transport: a subprocess, bytes on pipes, one JSON message a line.

Every line the server writes is parsed and schema-checked by `StdioServer` (tests/support/wire.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from hexmcp.wire import jsonrpc
from hexmcp.core import versions

from ..fixtures.demo_server import NOISE

pytestmark = [pytest.mark.slow, pytest.mark.timeout(30)]


def error_code(message: dict) -> int:
    assert "error" in message, f"expected an error, got {message}"
    return message["error"]["code"]


def test_malformed_json_is_a_parse_error_with_a_null_id(stdio_server) -> None:
    server = stdio_server()
    server.write(b'{"jsonrpc": "2.0", "id": 1, "method": \n')
    reply = server.receive()
    assert reply["id"] is None
    assert error_code(reply) == jsonrpc.PARSE_ERROR
    assert server.request(2, "ping")["result"] == {}


def test_invalid_utf8_is_a_parse_error_that_says_where(stdio_server) -> None:
    server = stdio_server()
    line = b'{"jsonrpc": "2.0", "id": 1, "method": "ping\xff\xfe"}\n'
    server.write(line)
    reply = server.receive()
    assert error_code(reply) == jsonrpc.PARSE_ERROR
    assert "not valid UTF-8" in reply["error"]["message"]
    bad_byte = line.index(b"\xff")
    assert f"offset {bad_byte}" in reply["error"]["message"]


def test_a_missing_jsonrpc_member_is_named_as_missing(stdio_server) -> None:
    server = stdio_server()
    server.send({"id": 3, "method": "ping"})
    reply = server.receive()
    assert error_code(reply) == jsonrpc.INVALID_REQUEST
    assert "'jsonrpc' member is missing" in reply["error"]["message"]


def test_a_wrong_jsonrpc_version_is_an_invalid_request(stdio_server) -> None:
    server = stdio_server()
    server.send({"jsonrpc": "1.0", "id": 7, "method": "ping"})
    reply = server.receive()
    assert error_code(reply) == jsonrpc.INVALID_REQUEST
    assert reply["id"] == 7


@pytest.mark.parametrize("garbage", [42, "ping", None, [1, 2, 3], []])
def test_non_objects_are_invalid_requests(stdio_server, garbage) -> None:
    server = stdio_server()
    server.send(garbage)
    reply = server.receive()
    assert error_code(reply) == jsonrpc.INVALID_REQUEST
    assert reply["id"] is None


@pytest.mark.parametrize("bad_id", [True, 1.5, {"a": 1}, None])
def test_ids_must_be_strings_or_integers(stdio_server, bad_id) -> None:
    server = stdio_server()
    server.send({"jsonrpc": "2.0", "id": bad_id, "method": "ping"})
    reply = server.receive()
    assert error_code(reply) == jsonrpc.INVALID_REQUEST
    assert reply["id"] is None


@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
def test_unknown_method_and_invalid_params(stdio_server, version) -> None:
    server = stdio_server()
    server.initialize(version)
    assert error_code(server.request(1, "tools/frobnicate", {})) == jsonrpc.METHOD_NOT_FOUND
    reply = server.request(2, "tools/call", {"name": "echo", "arguments": {"text": 5}})
    if versions.features(version).argument_errors_as_results:  # a tool execution error (SEP-1303)
        result = reply["result"]
        assert result["isError"] is True and result["_meta"]["io.hexmcp/errorData"]["path"] == "$.arguments.text"
        assert f"(eventId {result['_meta']['io.hexmcp/eventId']})" in result["content"][0]["text"]
    else:
        assert error_code(reply) == jsonrpc.INVALID_PARAMS
        assert reply["error"]["data"]["path"] == "$.arguments.text"
        assert reply["error"]["data"]["eventId"]
    assert error_code(server.request(3, "tools/call", {"name": "nope", "arguments": {}})) == jsonrpc.INVALID_PARAMS


@pytest.mark.parametrize("level", ["DEBUG", "verbose", 5, ["info"]])
def test_a_bad_log_level_names_the_levels_there_are(stdio_server, level) -> None:
    server = stdio_server()
    server.initialize()
    error = server.request(1, "logging/setLevel", {"level": level})["error"]
    assert error["code"] == -32602
    assert error["message"] == ("Invalid params: expected one of 'debug', 'info', 'notice', 'warning', 'error', "
                                "'critical', 'alert', 'emergency' @ $.level"), error


def test_a_rejected_initialize_may_be_retried(stdio_server) -> None:
    server = stdio_server()
    assert error_code(server.request(1, "initialize", {"capabilities": {}})) == jsonrpc.INVALID_PARAMS
    assert error_code(server.request(2, "tools/list")) == jsonrpc.INVALID_REQUEST
    assert server.initialize(versions.V2024_11_05)["protocolVersion"] == versions.V2024_11_05
    assert server.request(3, "tools/list")["result"]["tools"]


def test_requests_before_initialize_are_invalid_requests(stdio_server) -> None:
    server = stdio_server()
    assert error_code(server.request(1, "tools/list")) == jsonrpc.INVALID_REQUEST
    assert server.request(2, "ping")["result"] == {}


def test_notifications_get_no_answer(stdio_server) -> None:
    server = stdio_server()
    server.initialize()
    server.notify("notifications/whatever", {"x": 1})
    server.notify("notifications/cancelled", {"requestId": "never-sent"})
    server.notify("tools/list")  # a request method without an id is still a notification
    assert server.nothing_more()
    assert server.request(1, "ping")["result"] == {}


def test_a_slow_tool_does_not_block_ping(stdio_server) -> None:
    server = stdio_server()
    server.initialize()
    server.send({"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
                 "params": {"name": "slow", "arguments": {"seconds": 1.0, "steps": 1}}})
    started = time.perf_counter()
    assert server.request("ping", "ping")["result"] == {}
    assert time.perf_counter() - started < 0.8, "ping waited for the slow tool"
    assert server.receive()["id"] == "slow"


def test_progress_notifications_precede_the_result(stdio_server) -> None:
    server = stdio_server()
    server.initialize()
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": {"name": "slow", "arguments": {"seconds": 0.1, "steps": 2}, "_meta": {"progressToken": "p"}}})
    messages = [server.receive(), server.receive(), server.receive()]
    assert [m.get("method") for m in messages[:2]] == ["notifications/progress"] * 2
    assert messages[2]["id"] == 1


def test_a_cancelled_request_gets_no_answer(stdio_server) -> None:
    server = stdio_server()
    server.initialize()
    server.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                 "params": {"name": "slow", "arguments": {"seconds": 5, "steps": 1}}})
    time.sleep(0.2)
    server.notify("notifications/cancelled", {"requestId": 5})
    assert server.request(6, "ping")["result"] == {}
    assert server.nothing_more(0.5)


BATCH = [{"jsonrpc": "2.0", "id": 1, "method": "ping"},
         {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "b"}}},
         {"jsonrpc": "2.0", "method": "notifications/whatever"}]


@pytest.mark.parametrize("version", versions.HANDSHAKE_VERSIONS)
def test_batches_only_on_the_version_that_has_them(stdio_server, version: str) -> None:
    server = stdio_server()
    server.initialize(version)
    server.send(BATCH)
    reply = server.receive()
    if versions.features(version).batching:
        assert sorted(item["id"] for item in reply) == [1, 2]
    else:
        assert error_code(reply) == jsonrpc.INVALID_REQUEST


def test_an_oversize_line_is_refused_and_serving_goes_on(stdio_server) -> None:
    limit = 1000
    server = stdio_server("--max-message-bytes", str(limit))
    server.initialize()
    huge = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"text": "x" * 3 * limit}}}).encode() + b"\n"
    server.write(huge[:limit // 2])
    server.write(huge[limit // 2:])
    assert error_code(server.receive()) == jsonrpc.INVALID_REQUEST
    assert server.request(2, "tools/call", {"name": "echo", "arguments": {"text": "small"}})["result"]["content"]


def test_a_line_split_across_writes(stdio_server) -> None:
    server = stdio_server()
    server.initialize()
    message = {"jsonrpc": "2.0", "id": "split", "method": "tools/call",
               "params": {"name": "echo", "arguments": {"text": "héllo wörld"}}}
    server.transcript.sent(message)
    data = (json.dumps(message, ensure_ascii=False) + "\n").encode()
    for i in range(len(data)):  # one byte per write, splitting multi-byte characters too
        server.write(data[i:i + 1])
    reply = server.receive()
    assert reply["result"]["content"][0]["text"] == "héllo wörld"


def test_several_messages_in_one_write(stdio_server) -> None:
    server = stdio_server()
    server.initialize()
    messages = [{"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "add", "arguments": {"a": n, "b": 1}}}
                for n in range(20)]
    for message in messages:
        server.transcript.sent(message)
    server.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    replies = {reply["id"]: reply for reply in (server.receive() for _ in messages)}
    assert {n: r["result"]["structuredContent"]["sum"] for n, r in replies.items()} == {n: n + 1 for n in range(20)}


def test_a_last_line_without_newline_is_served_at_eof(stdio_server) -> None:
    server = stdio_server()
    server.transcript.sent({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    server.write(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
    server.close_stdin()
    assert [m["id"] for m in server.rest_of_stdout()] == [1]


def test_eof_with_a_slow_call_in_flight_still_answers_and_exits_zero(stdio_server) -> None:
    server = stdio_server()
    server.initialize()
    server.send({"jsonrpc": "2.0", "id": "late", "method": "tools/call",
                 "params": {"name": "slow", "arguments": {"seconds": 0.5, "steps": 1}}})
    server.close_stdin()
    assert [m["id"] for m in server.rest_of_stdout()] == ["late"]
    assert server.finish() == 0


def test_a_client_that_reads_late_still_gets_every_answer() -> None:
    # Under uvloop (the real command's loop) the last answers sat in the pipe transport's buffer when
    # the process exited, and were lost.
    from ..support.peer import initialize_params
    from ..support.wire import REPO_ROOT

    # ~105 KB of answers: a full 64 KB pipe plus a buffer under the transport's high-water mark, which
    # drain() does not wait for.
    ids = [f"ping-{n:05d}-" + "x" * 100 for n in range(700)]
    lines = [{"jsonrpc": "2.0", "id": "init", "method": "initialize",
              "params": initialize_params(versions.LATEST_HANDSHAKE_VERSION)},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": request_id, "method": "ping"} for request_id in ids]
    process = subprocess.Popen([sys.executable, "-m", "hexmcp.app.cli", "stdio", "--no-classifier"],
                               cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def write_all_then_eof() -> None:
        process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
        process.stdin.close()

    writer = threading.Thread(target=write_all_then_eof)
    writer.start()
    time.sleep(2.0)  # nobody reads stdout yet: the answers pile up behind a full pipe
    output = process.stdout.read()
    writer.join()
    assert process.wait(timeout=20) == 0
    answered = [json.loads(line)["id"] for line in output.splitlines()]
    assert answered[0] == "init" and sorted(answered[1:]) == ids  # answers may come in any order


def open_listen(server, request_id: int) -> None:
    from ..support.peer import stateless_meta

    server.transcript.version = versions.LATEST_VERSION  # notifications are checked against the 2026 schema
    server.send({"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen",
                 "params": {"_meta": stateless_meta(), "notifications": {"toolsListChanged": True}}})
    assert server.receive()["method"] == "notifications/subscriptions/acknowledged"


def test_eof_ends_an_open_listen_with_its_result_and_exits_zero(stdio_server) -> None:
    server = stdio_server()
    open_listen(server, 9)
    server.close_stdin()
    [result] = server.rest_of_stdout()
    assert result["id"] == 9 and result["result"]["resultType"] == "complete"
    assert server.finish() == 0


def test_sigterm_ends_an_open_listen_and_exits_zero(stdio_server) -> None:
    server = stdio_server()
    open_listen(server, 10)
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(10) == 0
    assert [m["id"] for m in server.rest_of_stdout()] == [10]


def test_a_ping_behind_a_batch_does_not_wait_for_it(stdio_server) -> None:
    server = stdio_server()
    server.initialize(versions.V2025_03_26)
    slow = [{"jsonrpc": "2.0", "id": n, "method": "tools/call",
             "params": {"name": "slow", "arguments": {"seconds": 5, "steps": 1}}} for n in range(3)]
    server.send(slow)
    assert server.request("ping", "ping", timeout=3)["result"] == {}  # bounded: a blocked reader would hang here


def test_only_protocol_lines_on_stdout_even_when_a_tool_prints(stdio_server) -> None:
    server = stdio_server()
    server.initialize()
    reply = server.request(1, "tools/call", {"name": "noisy", "arguments": {}})
    assert reply["result"]["content"][0]["text"] == "quiet on the wire"
    server.request(2, "ping")
    server.close_stdin()
    assert server.rest_of_stdout() == []  # every line already read parsed as a protocol message
    assert server.finish() == 0
    assert NOISE in server.stderr_text()
    assert f"{NOISE} (fd 1)" in server.stderr_text()
    # The warning is a JSON log line of its own (it was raw text over two lines), naming the request's ids.
    warned = [json.loads(line) for line in server.stderr_text().splitlines() if "(warning)" in line]
    assert len(warned) == 1 and warned[0]["logger"] == "py.warnings", warned
    assert warned[0].get("sessionId") and warned[0].get("traceId"), warned
    # So is the print (it was raw text); the fd-1 write stays raw: it is below Python.
    printed = [json.loads(line) for line in server.stderr_text().splitlines() if line.startswith("{")
               and json.loads(line).get("logger") == "stdout"]
    assert [r["event"] for r in printed] == [f"printed to stdout: {NOISE}"], printed
    assert printed[0]["traceId"] == warned[0]["traceId"]


def test_stderr_logs_are_json_with_correlation_ids(stdio_server) -> None:
    server = stdio_server()
    server.initialize()
    server.request(1, "tools/call", {"name": "fail", "arguments": {}})
    server.request(2, "tools/call", {"name": "echo", "arguments": {"text": 1}})
    assert server.finish() == 0
    records = [json.loads(line) for line in server.stderr_text().splitlines() if line.strip()]
    assert all(isinstance(r, dict) and "event" in r and "level" in r for r in records)
    failures = [r for r in records if r.get("eventId") and r.get("traceId")]
    assert failures, records
    assert all(r.get("sessionId") for r in failures)


def test_a_stateless_2026_request_over_stdio(stdio_server) -> None:
    from ..support.peer import stateless_meta

    server = stdio_server()
    reply = server.request(1, "tools/call", {"name": "echo", "arguments": {"text": "no handshake"},
                                             "_meta": stateless_meta()})
    assert reply["result"]["resultType"] == "complete"


@pytest.mark.parametrize("null_end", ["stdin", "stdout"])
def test_dev_null_on_either_end_is_served_not_a_crash(tmp_path, null_end: str) -> None:
    # /dev/null refuses epoll; uvloop used to abort the process (exit 134) when it was given one.
    from ..support.peer import initialize_params
    from ..support.wire import REPO_ROOT

    requests = tmp_path / "requests.jsonl"
    requests.write_text("\n".join(json.dumps(m) for m in [
        {"jsonrpc": "2.0", "id": "init", "method": "initialize",
         "params": initialize_params(versions.LATEST_HANDSHAKE_VERSION)},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "ping"}]) + "\n")
    answers = tmp_path / "answers.jsonl"
    with open(os.devnull, "rb") as null_in, open(os.devnull, "wb") as null_out, \
            open(requests, "rb") as file_in, open(answers, "wb") as file_out:
        completed = subprocess.run([sys.executable, "-m", "hexmcp.app.cli", "stdio", "--no-classifier"],
                                   cwd=REPO_ROOT, stdin=null_in if null_end == "stdin" else file_in,
                                   stdout=null_out if null_end == "stdout" else file_out,
                                   stderr=subprocess.DEVNULL, timeout=20)
    assert completed.returncode == 0
    if null_end == "stdin":
        assert answers.read_bytes() == b""  # nothing asked, nothing answered


def test_a_host_that_exits_closing_both_pipes_ends_us_with_zero_and_no_traceback() -> None:
    # Found by the hostile probes (bench/hostile_probes.py): when the host exited, closing our stdout's
    # reader with our stdin, the writer's close at EOF called into the already closed pipe transport and the
    # process ended with a RuntimeError traceback and exit status 1.
    from tests.support.wire import REPO_ROOT

    command = [sys.executable, "-m", "hexmcp.app.cli", "stdio", "--no-classifier", "--no-knowledge"]
    process = subprocess.Popen(command, cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": versions.V2025_06_18, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    process.stdin.write(json.dumps(init).encode() + b"\n")
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 0
    process.stdout.close()  # the host is gone, both pipes at once
    process.stdin.close()
    assert process.wait(10) == 0
    assert b"Traceback" not in process.stderr.read()


def test_sigterm_after_eof_ends_a_call_that_never_ends(stdio_server) -> None:
    # Before: after EOF the adapter waited for every request in flight with no bound, and its SIGTERM
    # handler only stopped the reading, already over: a call that never ended (a tool with no timeout, an
    # upstream that never answers) kept the process alive through the host's SIGTERM, until SIGKILL.
    server = stdio_server()
    server.initialize()
    server.send({"jsonrpc": "2.0", "id": "forever", "method": "tools/call",
                 "params": {"name": "slow", "arguments": {"seconds": 3600, "steps": 1}}})
    time.sleep(0.5)
    server.close_stdin()
    time.sleep(0.5)
    assert server.process.poll() is None  # EOF alone still lets the call finish
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(20) == 0  # within the 10 s grace, then cancelled
    assert "requests still running after SIGTERM were cancelled" in server.stderr_text()
