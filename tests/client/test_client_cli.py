"""The client commands as a user runs them: `hexmcp ...` in a subprocess against real servers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hexmcp.app.commands.client import ClientExit

from ..fixtures.demo_server import GREETING, SECRET
from .servers import DEMO_STDIO, REPO_ROOT, SDK_SERVER, Cancellations, live_targets

pytestmark = pytest.mark.timeout(120)
HEXMCP = [sys.executable, "-m", "hexmcp.app.cli"]
TOKEN = "cli-token"


def hexmcp(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HEXMCP, *args], capture_output=True, text=True, input=stdin, timeout=90, cwd=REPO_ROOT,
                          check=False)


@pytest.fixture(scope="module")
def guarded():
    with live_targets(Cancellations(), auth_token=TOKEN) as targets:
        yield targets


def test_tools_resources_prompts_and_read_print_text_and_json(live) -> None:
    listed = hexmcp("tools", live.http_url)
    assert listed.returncode == ClientExit.OK, listed.stderr
    assert "echo(text)" in listed.stdout and "slow(seconds, steps?)" in listed.stdout
    as_json = json.loads(hexmcp("tools", "--stdio", DEMO_STDIO, "--json").stdout)
    assert "echo" in {tool["name"] for tool in as_json["tools"]} and "inputSchema" in as_json["tools"][0]
    resources = json.loads(hexmcp("resources", live.ws_url, "--json").stdout)
    assert [r["uri"] for r in resources["resources"]] == ["demo://greeting"]
    assert resources["resourceTemplates"][0]["uriTemplate"] == "demo://items/{item_id}"
    assert "greet(name, style?)" in hexmcp("prompts", "--rest", live.http_url).stdout
    assert hexmcp("read", live.http_url, "demo://greeting").stdout.strip() == GREETING


@pytest.mark.parametrize("target", ["http", "stdio"])
def test_call_with_key_value_and_json_arguments(live, target: str) -> None:
    where = [live.http_url] if target == "http" else ["--stdio", DEMO_STDIO]
    added = hexmcp("call", *where, "add", "a=2", "b=40", "--json")
    assert added.returncode == ClientExit.OK, added.stderr
    assert json.loads(added.stdout)["structuredContent"] == {"sum": 42}
    # "5" stays a string: the tool's schema says `text` is one
    assert hexmcp("call", *where, "echo", "text=5").stdout.strip() == "5"
    merged = hexmcp("call", *where, "add", "--args-json", '{"a": 1, "b": 1}', "b=9", "--json")
    assert json.loads(merged.stdout)["structuredContent"] == {"sum": 10}


def test_exit_codes(live, guarded) -> None:
    failed = hexmcp("call", live.http_url, "fail")
    assert failed.returncode == ClientExit.TOOL_ERROR and SECRET not in failed.stdout + failed.stderr
    unknown = hexmcp("call", live.http_url, "no_such_tool")
    assert unknown.returncode == ClientExit.SERVER_ERROR and unknown.stderr.startswith("hexmcp call: ")
    assert hexmcp("call", live.http_url, "hang", "--timeout", "0.3").returncode == ClientExit.TIMEOUT
    assert hexmcp("tools", guarded.http_url).returncode == ClientExit.UNAUTHORIZED
    assert hexmcp("tools", guarded.http_url, "--auth-token", TOKEN).returncode == ClientExit.OK
    assert hexmcp("tools", "--stdio", f"{sys.executable} -c 'raise SystemExit(4)'").returncode == ClientExit.UNREACHABLE
    for usage in (["tools"], ["call", live.http_url, "echo", "novalue"], ["call", live.http_url, "echo", "--args-json", "[1"],
                  ["tools", "ftp://nowhere"], ["read", live.http_url], ["bench", live.http_url, "echo", "--concurrency", "0"]):
        refused = hexmcp(*usage)
        assert refused.returncode == ClientExit.USAGE, (usage, refused.stderr)
        assert refused.stderr.strip(), usage


def test_bench_gives_a_load_figure(live) -> None:
    ran = hexmcp("bench", live.http_url, "echo", "text=hi", "--concurrency", "2", "--duration", "1", "--json")
    assert ran.returncode == ClientExit.OK, ran.stderr
    figures = json.loads(ran.stdout)
    assert figures["calls"] > 0 and figures["errors"] == {} and figures["tool_errors"] == 0
    assert figures["p50_ms"] <= figures["p99_ms"]


DETERMINISTIC = [{"tool": "echo", "arguments": {"text": "héllo"}}, {"tool": "add", "arguments": {"a": 2, "b": 3}},
                 {"tool": "link", "arguments": {"name": "apple"}}]
# A tool error names its eventId, new each time: a result that differs on every replay.
CALLS = "\n".join(json.dumps(call) for call in [*DETERMINISTIC, {"tool": "refuse", "arguments": {"reason": "no"}}])


def test_record_then_replay_identically_on_another_transport(live, tmp_path: Path) -> None:
    record = tmp_path / "session.jsonl"
    calls_file = tmp_path / "calls.jsonl"
    calls_file.write_text("# deterministic calls\n" + "\n".join(json.dumps(call) for call in DETERMINISTIC))
    made = hexmcp("record", "--stdio", DEMO_STDIO, "--out", str(record), "--calls", str(calls_file))
    assert made.returncode == ClientExit.OK, made.stderr
    session, *calls = [json.loads(line) for line in record.read_text().splitlines()]
    assert session["kind"] == "session" and session["server"]["name"] == "hexmcp-demo" and session["protocolVersion"]
    assert [c["tool"] for c in calls] == ["echo", "add", "link"] and all(c["digest"].startswith("sha256:") for c in calls)
    for target in (live.http_url, live.ws_url):
        replayed = hexmcp("replay", str(record), target, "--json")
        assert replayed.returncode == ClientExit.OK, replayed.stdout + replayed.stderr
        assert json.loads(replayed.stdout)["identical"] == 3


def test_replay_reports_every_result_that_differs(tmp_path: Path) -> None:
    record = tmp_path / "session.jsonl"
    assert hexmcp("record", "--stdio", DEMO_STDIO, "--out", str(record), stdin=CALLS).returncode == ClientExit.OK
    # the SDK's server adds structuredContent to echo, writes add's text otherwise, has no `link` or `refuse`
    replayed = hexmcp("replay", str(record), "--stdio", f"{sys.executable} {SDK_SERVER}", "--json")
    assert replayed.returncode == ClientExit.TOOL_ERROR, replayed.stderr
    report = json.loads(replayed.stdout)
    assert report["identical"] == 0
    assert [d["tool"] for d in report["differences"]] == ["echo", "add", "link", "refuse"]
    assert report["differences"][0]["replayed"]["structuredContent"] == {"result": "héllo"}
    text = hexmcp("replay", str(record), "--stdio", f"{sys.executable} {SDK_SERVER}").stdout
    assert "call 2: add" in text and "0 of 4 call(s) replayed identically" in text
    again = hexmcp("replay", str(record), "--stdio", DEMO_STDIO, "--json")  # the same server: only the eventId moved
    assert [d["tool"] for d in json.loads(again.stdout)["differences"]] == ["refuse"]


@pytest.mark.slow
def test_classification_replays_identically(tmp_path: Path) -> None:
    """The deterministic tools of the product: classify_text on a fresh `hexmcp stdio` each time."""
    record = tmp_path / "classify.jsonl"
    texts = ["Prove that sqrt(2) is irrational", "Who won the battle of Hastings?", "What is 5 + 3?",
             "How do transistors work?"]
    calls = "\n".join(json.dumps({"tool": "classify_text", "arguments": {"text": t, "with_probabilities": True}})
                      for t in texts) + "\n" + json.dumps({"tool": "list_categories"})
    server = f"{sys.executable} -m hexmcp.app.cli stdio --no-knowledge"
    made = hexmcp("record", "--stdio", server, "--out", str(record), stdin=calls)
    assert made.returncode == ClientExit.OK, made.stderr
    recorded = [json.loads(line) for line in record.read_text().splitlines()][1:]
    assert len(recorded) == 5 and not any(call["isError"] for call in recorded)
    replayed = hexmcp("replay", str(record), "--stdio", server)
    assert replayed.returncode == ClientExit.OK, replayed.stdout + replayed.stderr
    assert "5 of 5 call(s) replayed identically" in replayed.stdout


def test_serving_never_imports_the_client() -> None:
    code = ("import sys\nfrom hexmcp.app import cli\ncli.parse_args(['stdio'])\ncli.parse_args(['serve'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('hexmcp.client') or m in ('aiohttp', 'httpx', 'tenacity')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_json_output_stays_clean_when_the_client_logs(tmp_path: Path) -> None:
    """A server that prints a banner on stdout makes the client log a warning: on stderr, never in the JSON."""
    noisy = f"sh -c 'echo starting up...; exec {DEMO_STDIO}'"
    ran = hexmcp("call", "--stdio", noisy, "add", "a=1", "b=2", "--json")
    assert ran.returncode == ClientExit.OK, ran.stderr
    assert json.loads(ran.stdout)["structuredContent"] == {"sum": 3}
    assert "not JSON" in ran.stderr
