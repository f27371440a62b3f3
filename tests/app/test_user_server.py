"""A user's own server through the public API (`from hexmcp import Server`), each way in tested with the
official SDK client: the README's first tool as written, over stdio, Streamable HTTP, the REST dialect
and WebSocket (both dialects); tools from an existing registry of plain callables; and the HTTP endpoints
mounted inside a user's Starlette application."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from hexmcp.client import McpClient
from hexmcp.wire import jsonrpc

from ..fixtures.sdk1_venv import VenvUnavailable, ensure_sdk1_python
from ..support.net import free_port
from ..support.sdk_refusals import refused_arguments
from ..support.serve_process import http_process

ROOT = Path(__file__).resolve().parents[2]
SDK1_CALL = ROOT / "tests" / "fixtures" / "ws_sdk1_call.py"
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def readme_first_tool() -> str:
    """The first Python block under "## Your first tool" in README.md, exactly as a user copies it."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Your first tool", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture
def weather(tmp_path: Path) -> Path:
    path = tmp_path / "weather.py"
    path.write_text(readme_first_tool())
    return path


def stdio_params(script: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(script)],
                                 env={**os.environ, "HEXMCP_LOG_LEVEL": "warning"})


def test_the_readme_example_is_ten_lines_of_code(weather: Path) -> None:
    code = [line for line in weather.read_text().splitlines() if line.strip()]
    assert len(code) <= 10


@pytest.mark.anyio
async def test_the_readme_first_tool_over_stdio(weather: Path) -> None:
    async with stdio_client(stdio_params(weather)) as streams:
        async with ClientSession(*streams) as session:
            init = await session.initialize()
            assert init.server_info.name == "weather"
            (tool,) = (await session.list_tools()).tools
            assert tool.name == "forecast" and tool.description == "The weather forecast for a city."
            assert tool.input_schema["required"] == ["city"]
            result = await session.call_tool("forecast", {"city": "Paris"})
            assert not result.is_error and result.content[0].text == "Paris: sunny for the next 3 days"
            assert "city" in await refused_arguments(session, "forecast", {"city": 7})


@pytest.fixture
def weather_over_http(weather: Path):
    port = free_port()
    with http_process([sys.executable, str(weather)], port,
                      env={"HEXMCP_TRANSPORT": "http", "HEXMCP_PORT": str(port)}) as served:
        yield served
        assert served.terminate() == 0  # SIGTERM drains and exits 0, as `hexmcp serve` does


@pytest.mark.anyio
async def test_the_readme_first_tool_over_streamable_http_and_rest(weather_over_http) -> None:
    base = weather_over_http.base
    async with streamable_http_client(f"{base}/mcp") as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            assert [tool.name for tool in (await session.list_tools()).tools] == ["forecast"]
            result = await session.call_tool("forecast", {"city": "Oslo", "days": 1})
            assert result.content[0].text == "Oslo: sunny for the next 1 days"
    rest = httpx.post(f"{base}/mcp/tools/call", json={"name": "forecast", "arguments": {"city": "Rome"}}, timeout=10)
    assert rest.status_code == 200 and rest.json()["content"][0]["text"] == "Rome: sunny for the next 3 days"
    invalid = httpx.post(f"{base}/mcp/tools/call", json={"name": "forecast", "arguments": {"city": 7}}, timeout=10)
    assert invalid.status_code == 400 and invalid.json()["code"] == jsonrpc.INVALID_PARAMS
    assert "argument city" in invalid.json()["message"]
    assert httpx.get(f"{base}/health", timeout=10).json()["status"] == "ok"


@pytest.mark.anyio
async def test_the_readme_first_tool_over_websocket_in_both_dialects(weather_over_http) -> None:
    port = weather_over_http.port
    async with McpClient(f"ws+chatgpt://127.0.0.1:{port}/ws") as client:  # no `jsonrpc` member
        result = await client.call_tool("forecast", {"city": "Lima"})
        assert result.content[0].text == "Lima: sunny for the next 3 days"
    try:
        sdk1 = ensure_sdk1_python()
    except VenvUnavailable as error:
        pytest.skip(f"could not build the MCP SDK 1.x venv: {error}")
    done = subprocess.run([str(sdk1), str(SDK1_CALL), f"ws://127.0.0.1:{port}/ws", "forecast", '{"city": "Pune"}'],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["server"] == "weather" and report["tools"] == ["forecast"]
    assert report["text"] == "Pune: sunny for the next 3 days" and not report["isError"]


REGISTRY = '''
from typing import TypedDict

from hexmcp import Server


def add(a, b):
    """Add two integers."""
    return {"sum": a + b}


def shout(text):
    """Upper-case a text."""
    return text.upper()


# An application's own table of tools: plain functions with hand-written JSON Schemas.
TOOLS = [
    ("add", {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
             "required": ["a", "b"]}, add),
    ("shout", {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}, shout),
]


class Reading(TypedDict):
    city: str
    celsius: float


server = Server("registry")
server.add_tools(TOOLS)


@server.tool()
def temperature(city: str) -> Reading:
    """The temperature in a city."""
    return {"city": city, "celsius": 21.5}


@server.resource("notes://{day}")
def notes(day: str) -> str:
    return f"notes of {day}"


@server.prompt()
def greet(name: str) -> str:
    return f"Say hello to {name}."


if __name__ == "__main__":
    server.run()
'''


@pytest.mark.anyio
async def test_tools_from_a_registry_of_plain_callables_resources_and_prompts(tmp_path: Path) -> None:
    script = tmp_path / "registry.py"
    script.write_text(REGISTRY)
    async with stdio_client(stdio_params(script)) as streams:
        async with ClientSession(*streams) as session:
            await session.initialize()
            assert sorted(t.name for t in (await session.list_tools()).tools) == ["add", "shout", "temperature"]
            added = await session.call_tool("add", {"a": 2, "b": 40})
            assert added.structured_content == {"sum": 42}
            assert (await session.call_tool("shout", {"text": "hi"})).content[0].text == "HI"
            reading = await session.call_tool("temperature", {"city": "Bern"})
            assert reading.structured_content == {"city": "Bern", "celsius": 21.5}
            temperature = next(t for t in (await session.list_tools()).tools if t.name == "temperature")
            assert temperature.output_schema["required"] == ["city", "celsius"]
            assert "argument a" in await refused_arguments(session, "add", {"a": "two", "b": 40})
            read = await session.read_resource("notes://monday")
            assert read.contents[0].text == "notes of monday"
            prompt = await session.get_prompt("greet", {"name": "Ada"})
            assert prompt.messages[0].content.text == "Say hello to Ada."


HOST_APP = '''
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from hexmcp import Server

server = Server("mounted")


@server.tool()
async def echo(text: str) -> str:
    """Echo a text."""
    return text


async def hello(request):
    return PlainTextResponse("the host app answers too")


mcp_app = server.http_app()
app = Starlette(routes=[Route("/hello", hello), Mount("/mcp", app=mcp_app)], lifespan=mcp_app.lifespan)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
'''


@pytest.mark.anyio
async def test_the_http_endpoints_mounted_in_a_users_starlette_app(tmp_path: Path) -> None:
    script = tmp_path / "host.py"
    script.write_text(HOST_APP)
    port = free_port()
    with http_process([sys.executable, str(script), str(port)], port, healthy=False) as served:
        base = served.base
        _wait_for(lambda: httpx.get(f"{base}/mcp/health", timeout=5).status_code == 200)
        async with streamable_http_client(f"{base}/mcp/") as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("echo", {"text": "héllo"})
                assert result.content[0].text == "héllo"
        rest = httpx.post(f"{base}/mcp/tools/call", json={"name": "echo", "arguments": {"text": "x"}}, timeout=10)
        assert rest.json()["content"][0]["text"] == "x"
        assert httpx.get(f"{base}/hello", timeout=10).text == "the host app answers too"
        assert httpx.get(f"{base}/mcp/livez", timeout=10).status_code == 200  # the liveness probe under the mount


def _wait_for(ready, timeout_s: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if ready():
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "never ready"
        time.sleep(0.1)


def test_a_user_server_on_every_interface_without_a_token_is_refused(weather: Path) -> None:
    """`Server.run()` over HTTP keeps `hexmcp serve`'s rule: beyond loopback, a token or an explicit
    allow_unauthenticated (issue 30)."""
    env = {k: v for k, v in os.environ.items() if k not in ("HEXMCP_AUTH_TOKEN", "HEXMCP_AUTH_TOKEN_FILE")}
    env.update(HEXMCP_TRANSPORT="http", HEXMCP_HOST="0.0.0.0", HEXMCP_PORT=str(free_port()))
    out = subprocess.run([sys.executable, str(weather)], env=env, capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 2, out.stderr
    assert out.stderr.splitlines() == [
        "hexmcp serve: refusing to serve on 0.0.0.0 without authentication; fix: set HEXMCP_AUTH_TOKEN or "
        "--auth-token-file, or pass --allow-unauthenticated to serve anyone who can reach the port"]
