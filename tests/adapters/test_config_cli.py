"""The one config file through the real command: `hexmcp config check` and `hexmcp serve --config` as
subprocesses, the served settings seen from outside (/health, the bearer token, upstream tools mounted
from `[[upstream]]`, reached with the official SDK client) (ADR 0911).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import httpx2
import pytest
import tomli_w
from mcp import StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from hexmcp.app.commands.config_check import MASK
from hexmcp.core.startup import ExitCode
from tests.client.servers import DEMO_STDIO
from tests.support.net import free_port

pytestmark = pytest.mark.timeout(120)
SECRETS = {"auth": "auth-Secret-1", "api": "api-Secret-2", "upstream": "upstream-Secret-3", "url": "url-Secret-4"}


def hexmcp(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hexmcp.app.cli", *argv], capture_output=True, text=True,
                          env={**clean_env(), **(env or {})}, timeout=60, check=False)


def clean_env() -> dict[str, str]:
    """This environment without any setting a variable could give, so each test says all it sets."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("HEXMCP_", "GATEWAY_"))}


def write(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "hexmcp.toml"
    path.write_text(tomli_w.dumps(document), encoding="utf-8")
    return path


def full_config(tmp_path: Path) -> Path:
    return write(tmp_path, {
        "log_level": "warning",
        "serve": {"port": 8123, "auth_token": SECRETS["auth"], "docs": ["README.md"], "stateless": True},
        "stdio": {"max_message_bytes": 65536},
        "gateway": {"url": f"http://user:{SECRETS['url']}@127.0.0.1:8000/v1", "api_key": SECRETS["api"],
                    "retries": {"max": 2}},
        "upstream": [{"name": "kb", "target": "http://127.0.0.1:9000/mcp", "auth_token": SECRETS["upstream"]}],
    })


def test_config_check_prints_the_effective_settings_with_their_origin(tmp_path: Path) -> None:
    config = full_config(tmp_path)
    out = hexmcp("config", "check", str(config), "--json", "--command", "serve", "--command", "stdio",
                 env={"HEXMCP_PORT": "9001"})
    assert out.returncode == ExitCode.OK, out.stderr
    report = json.loads(out.stdout)
    serve, stdio = report["commands"]["serve"], report["commands"]["stdio"]
    assert serve["port"] == {"value": 9001, "source": "env", "where": "HEXMCP_PORT"}
    assert serve["docs"] == {"value": ["README.md"], "source": "file", "where": "serve.docs in hexmcp.toml"}
    assert serve["log_level"]["value"] == "warning" and serve["log_level"]["where"] == "log_level in hexmcp.toml"
    assert serve["host"] == {"value": "127.0.0.1", "source": "default", "where": ""}
    assert stdio["max_message_bytes"]["value"] == 65536 and "port" not in stdio
    assert report["gateway"]["retries"]["max_retries"] == 2
    assert report["upstreams"][0]["target"] == "http://127.0.0.1:9000/mcp"


def test_config_check_masks_every_secret(tmp_path: Path) -> None:
    config = full_config(tmp_path)
    for form in ((), ("--json",)):
        out = hexmcp("config", "check", str(config), *form)
        assert out.returncode == ExitCode.OK, out.stderr
        assert not [name for name, secret in SECRETS.items() if secret in out.stdout], out.stdout
    report = json.loads(out.stdout)
    assert report["commands"]["serve"]["auth_token"]["value"] == MASK
    assert report["gateway"]["api_key"] == MASK and report["upstreams"][0]["auth_token"] == MASK
    assert report["gateway"]["url"] == f"http://{MASK}@127.0.0.1:8000/v1"


@pytest.mark.parametrize(("document", "env", "line"), [
    ({"serve": {"prot": 1}}, {}, "serve.prot in hexmcp.toml: unknown key for hexmcp serve (did you mean serve.port?)"),
    ({"server": {"port": 8091}}, {}, "server.port in hexmcp.toml: unknown key (did you mean serve.port?)"),
    ({"gateway": {"urll": "http://127.0.0.1:1/v1"}}, {}, "gateway.urll in hexmcp.toml: unknown key (did you mean url?)"),
    ({"serve": {"port": "eighty"}}, {}, "serve.port in hexmcp.toml: must be a port number (0-65535), got 'eighty'"),
    ({"gateway": {"retries": {"max": "many"}}}, {}, "gateway.retries.max in hexmcp.toml: must be a whole number"),
    ({}, {"HEXMCP_MAX_SESSIONS": "lots"}, "HEXMCP_MAX_SESSIONS: must be a positive integer, got 'lots'"),
])
def test_config_check_refuses_with_one_line_and_exit_2(tmp_path: Path, document: dict[str, Any], env: dict[str, str],
                                                       line: str) -> None:
    out = hexmcp("config", "check", str(write(tmp_path, document)), env=env)
    assert out.returncode == ExitCode.USAGE
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith(f"hexmcp config check: invalid configuration: {line}")


@pytest.mark.parametrize(("command", "reason"), [
    ("srve", "not a command (did you mean serve?)"),
    ("zzz", "not a command (known: stdio, serve, "),
])
def test_config_check_names_a_command_it_does_not_know(command: str, reason: str) -> None:
    out = hexmcp("config", "check", "--command", command)
    assert out.returncode == ExitCode.USAGE
    assert out.stderr.startswith(f"hexmcp config check: invalid configuration: --command {command}: {reason}")


@pytest.mark.parametrize(("document", "line"), [
    ({"serve": {"max_sessions": 0.5}}, "invalid configuration: serve.max_sessions in hexmcp.toml: must be a positive integer, got '0.5'"),
    ({"gateway": {"url": "http://127.0.0.1:1/v1", "retries": {"backoff": "random"}}},
     "invalid gateway configuration: gateway.retries.backoff in hexmcp.toml: must be one of linear, exponential, "
     "got 'random'"),
])
def test_serve_refuses_a_bad_file_before_binding_the_port(tmp_path: Path, document: dict[str, Any], line: str) -> None:
    port = free_port()
    config = write(tmp_path, {**document, "serve": {"port": port, "no_classifier": True, "no_knowledge": True,
                                                    **document.get("serve", {})}})
    started = time.monotonic()
    out = hexmcp("serve", "--config", str(config))
    assert out.returncode == ExitCode.USAGE and time.monotonic() - started < 30
    assert out.stderr.strip() == f"hexmcp serve: {line}"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """`hexmcp serve --config FILE` with port, token, tools and an upstream (the demo server over stdio)
    all from the file; yields the base URL and the token once /health answers."""
    port, token = free_port(), "served-token"
    config = write(tmp_path, {"serve": {"port": port, "auth_token": token, "no_classifier": True,
                                        "no_knowledge": True, "log_level": "warning"},
                              "upstream": [{"name": "demo", "target": f"stdio:{DEMO_STDIO}", "retry_initial": 0.05}]})
    process = subprocess.Popen([sys.executable, "-m", "hexmcp.app.cli", "serve", "--config", str(config)],
                               env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stderr.read().decode()  # type: ignore[union-attr]
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "hexmcp serve --config never became healthy"
            time.sleep(0.1)
        yield base, token
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == ExitCode.OK


def test_serve_takes_its_port_token_and_upstreams_from_the_file(served: tuple[str, str]) -> None:
    base, token = served
    refused = httpx.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                         headers={"accept": "application/json, text/event-stream"})
    assert refused.status_code == 401

    async def scenario() -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            async with streamable_http_client(f"{base}/mcp", http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    for _ in range(200):  # the upstream mounts in the background, after the port opens
                        names = {tool.name for tool in (await session.list_tools()).tools}
                        if "demo__echo" in names:
                            break
                        await asyncio.sleep(0.05)
                    assert "demo__echo" in names
                    echoed = await session.call_tool("demo__echo", {"text": "through the config file"})
                    assert echoed.content[0].text == "through the config file"

    asyncio.run(scenario())


def test_stdio_takes_its_upstreams_from_the_file_and_keeps_stdout_for_the_protocol(tmp_path: Path) -> None:
    config = write(tmp_path, {"no_classifier": True, "no_knowledge": True, "log_level": "debug",
                              "upstream": [{"name": "demo", "target": f"stdio:{DEMO_STDIO}", "retry_initial": 0.05}]})
    server = StdioServerParameters(command=sys.executable, args=["-m", "hexmcp.app.cli", "stdio"],
                                   env={**clean_env(), "HEXMCP_CONFIG": str(config)})

    async def scenario() -> None:  # the SDK client fails on any stdout line that is not a protocol message
        async with stdio_client(server) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                for _ in range(200):
                    if "demo__echo" in {tool.name for tool in (await session.list_tools()).tools}:
                        break
                    await asyncio.sleep(0.05)
                echoed = await session.call_tool("demo__echo", {"text": "over stdio"})
                assert echoed.content[0].text == "over stdio"

    asyncio.run(scenario())


def test_stdio_refuses_a_bad_file_on_stderr_only(tmp_path: Path) -> None:
    out = hexmcp("stdio", "--config", str(write(tmp_path, {"stdio": {"max_message_bytes": 0}})))
    assert out.returncode == ExitCode.USAGE and out.stdout == ""
    assert out.stderr.strip() == ("hexmcp stdio: invalid configuration: stdio.max_message_bytes in hexmcp.toml: "
                                  "must be a positive integer, got 0")
