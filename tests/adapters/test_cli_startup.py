"""A bad --taxonomy file stops `hexmcp stdio` and `hexmcp serve` before they serve anything; what
`hexmcp stdio` does before it answers `initialize` stays off the heavy imports (issue 14's cold start,
ADRs 0007 and 0011), and the tools and the model are all there after it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from hexmcp.app import cli
from hexmcp.app.serving import composed
from tests.support.first_start import WarmCache
from tests.support.fresh_imports import modules_imported_by
from tests.support.net import free_port


@pytest.mark.parametrize("command", ["stdio", "serve"])
@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("bad.csv", "cat,txt\na,b\n", "bad.csv, line 1: header lacks column(s) category, text"),
        ("bad.yaml", "categories:\n  - name: a\n    model: m\n    examples: [x]\n  - name: b\n    examples: [y]\n",
         "bad.yaml, line 2: unknown key(s) model in category 'a'"),
        ("absent.csv", None, "absent.csv: cannot read file"),
    ],
)
def test_bad_taxonomy_fails_start_up_with_file_line_and_reason(tmp_path, command, name, content, expected):
    path = tmp_path / name
    if content is not None:
        path.write_text(content, encoding="utf-8")
    extra = ["--port", str(free_port())] if command == "serve" else []
    out = subprocess.run(
        [sys.executable, "-m", "hexmcp.app.cli", command, "--taxonomy", str(path), *extra],
        input=b"", capture_output=True, timeout=60, check=False,
    )
    assert out.returncode == 2
    assert out.stdout == b""  # stdio: nothing but protocol messages, and there were none
    assert expected in out.stderr.decode()


# Imported only by work that runs after the handshake (the model, the index), never before `initialize`.
DEFERRED_MODULES = ("numpy", "onnx", "onnxruntime", "tokenizers", "safetensors", "bm25s", "jsonschema")
# Besides those, never imported by `hexmcp stdio` before its initialize answer is written (ADR 0011): the
# background work's libraries, other commands' and transports' modules, and what only a flag asks for.
NOT_BEFORE_THE_ANSWER = (*DEFERRED_MODULES, "hexmcp.tools.classification.engine", "markdown_it", "yaml", "pypdf",
                         "docutils", "selectolax", "faiss", "scipy", "networkx", "rapidfuzz", "yake", "tqdm", "watchfiles",
                         "prometheus_client", "opentelemetry", "aiohttp", "httpx", "redis", "starlette", "uvicorn",
                         "websockets", "hexmcp.client", "hexmcp.adapters.http", "hexmcp.adapters.ws",
                         "hexmcp.adapters.audit.reader", "importlib.metadata",
                         "tomllib", "shlex",  # read only for a config file, a list in one variable (ADR 0013)
                         # the concept tools' handlers, loaded on first use or by the start-up hook (ADR 0013)
                         "hexmcp.tools.concepts.mcp_tools", "hexmcp.tools.concepts.items",
                         "hexmcp.tools.concepts.model")
# Run as `python -c PROBE stdio ...`: the real `hexmcp stdio` (its module imported first, as the command does),
# which also writes into $MODULES_AT_ANSWER, at the moment the first answer (to `initialize`) goes to the wire,
# the names of the modules loaded and what the compiled code cache did (ADR 0013). It starts serving once
# the client's first message waits on stdin, as a host's `initialize` written right after the spawn does:
# with nothing waiting at start the hooks start at once (adapters/stdio/transport.py), and a client slower
# than the server to get going (a loaded machine) would test that other start instead.
PROBE = """
import json, os, select, sys
select.select([0], [], [], 60)
from hexmcp.app.cli import main
from hexmcp.adapters.stdio import transport
from hexmcp.app.start import code_cache
send, record = transport._WireWriter.send, os.environ["MODULES_AT_ANSWER"]
async def recording_send(self, message):
    if not os.path.exists(record):
        cache = code_cache._cache
        with open(record, "w") as out:
            json.dump({"answer": message, "modules": sorted(sys.modules),
                       "code_cache": cache and {"compiled": cache.compiled, "used": len(cache.used)}}, out)
    return await send(self, message)
transport._WireWriter.send = recording_send
sys.exit(main(sys.argv[1:]))
"""


def registered_tools(flags: list[str]) -> set[str]:
    """What the composition root registers for `hexmcp stdio FLAGS`, composed here in process."""
    args = cli.parse_args(["stdio", *flags])
    server = composed(args).server
    return {tool.name for tool in server.tools.definitions()}


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.timeout(180)
@pytest.mark.parametrize("flags", [["--no-classifier"], []], ids=["no-classifier", "classifier"])
async def test_the_initialize_answer_is_written_before_any_heavy_import(tmp_path: Path, flags: list[str],
                                                                        warm_cache: WarmCache,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The official SDK client starts `hexmcp stdio`; when the server writes its initialize answer none of
    NOT_BEFORE_THE_ANSWER is loaded, the background start-up hooks included (they start once the input
    waiting at start is answered). Then every tool is listed and, with the classifier, the model loads.
    A start after the first: a first start converts the model before it serves (by design, so a model
    that cannot be built stops it), which imports the libraries this test keeps off the path."""
    monkeypatch.setenv("HEXMCP_CACHE_DIR", str(warm_cache.path))
    record = tmp_path / "modules.json"
    params = StdioServerParameters(command=sys.executable, args=["-c", PROBE, "stdio", *flags, "--log-level", "warning"],
                                   env={**os.environ, "MODULES_AT_ANSWER": str(record)})
    async with stdio_client(params) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            at_answer = json.loads(record.read_text())
            assert "serverInfo" in at_answer["answer"]["result"]  # the first answer was initialize's
            loaded = set(at_answer["modules"])
            assert sorted(name for name in NOT_BEFORE_THE_ANSWER if name in loaded) == []
            listed = {tool.name for tool in (await session.list_tools()).tools}
            assert listed == registered_tools(flags)
            if flags == []:
                result = await session.call_tool("classify_text", {"text": "write a python function to sort a list"})
                assert not result.is_error and 0 < result.structured_content["confidence"] <= 1


def test_the_stdio_start_path_imports_no_deferred_module(warm_cache: WarmCache, monkeypatch: pytest.MonkeyPatch):
    """Everything `hexmcp stdio` runs before it serves, after a first start: flags, logging, both tool
    sets with the model prepared (the cached model named and verified) and the corpus read."""
    monkeypatch.setenv("HEXMCP_CACHE_DIR", str(warm_cache.path))
    code = (
        "from hexmcp.app import cli, serving\n"
        "from hexmcp.core.log import configure_logging\n"
        "args = cli.parse_args(['stdio'])\n"
        "configure_logging('warning')\n"
        "names = [pack.name for pack in serving.composed(args).packs]\n"
        "assert {'classification', 'knowledge', 'gateway'} <= set(names)"
    )
    assert modules_imported_by(code, DEFERRED_MODULES) == []


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.timeout(180)
async def test_a_second_start_takes_every_generated_method_from_the_code_cache(tmp_path: Path) -> None:
    """Two real starts of `hexmcp stdio` with one cache directory and different hash seeds (so the salts
    in the generated __hash__ methods differ): the first compiles attrs' methods and writes them, the
    second compiles none and serves the same tools (ADR 0013)."""
    seen = []
    for seed in ("1", "2"):
        record = tmp_path / f"at-answer-{seed}.json"
        env = {**os.environ, "MODULES_AT_ANSWER": str(record), "HEXMCP_CACHE_DIR": str(tmp_path / "cache"),
               "PYTHONHASHSEED": seed}
        env.pop("HEXMCP_CODE_CACHE", None)
        params = StdioServerParameters(command=sys.executable, args=["-c", PROBE, "stdio", "--no-classifier"], env=env)
        async with stdio_client(params) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                tools = {tool.name for tool in (await session.list_tools()).tools}
        seen.append((json.loads(record.read_text())["code_cache"], tools))
    (first, first_tools), (second, second_tools) = seen
    assert first["compiled"] == first["used"] > 50  # the core's models, params, records...
    assert second == {"compiled": 0, "used": first["used"]}
    assert second_tools == first_tools == registered_tools(["--no-classifier"])


@pytest.mark.parametrize(("flags", "env"), [(["--port", "99999"], {}), (["--port", "-1"], {}),
                                            (["--port", "65536"], {}), ([], {"HEXMCP_PORT": "70000"})])
def test_a_port_out_of_range_stops_serve_with_one_line(flags, env):
    # Before: 99999 was bound as 99999 % 65536 (the server listened on 34463, where nobody looks) and -1 ended
    # in a getaddrinfo error among the shutdown log lines.
    out = subprocess.run([sys.executable, "-m", "hexmcp.app.cli", "serve", "--no-classifier", "--no-knowledge", *flags],
                         input=b"", capture_output=True, timeout=60, check=False, env={**os.environ, **env})
    lines = out.stderr.decode().strip().splitlines()
    assert out.returncode == 2, out.stderr.decode()[-500:]
    assert len(lines) == 1 and "must be a port number (0-65535)" in lines[0] and "PORT" in lines[0].upper(), lines


def test_a_port_in_use_stops_serve_with_one_line():
    # Before: uvicorn logged the bind error among the start-up log lines and exited 3, which is
    # ExitCode.MODEL_PACKAGE_MISSING.
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run([sys.executable, "-m", "hexmcp.app.cli", "serve", "--no-classifier", "--no-knowledge",
                              "--port", str(port)], input=b"", capture_output=True, timeout=60, check=False)
    assert out.returncode == 2
    assert out.stderr.decode().strip().splitlines() == [
        f"hexmcp serve: cannot listen on 127.0.0.1:{port}: Address already in use"]
