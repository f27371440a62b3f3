"""Shared fixtures: an asyncio backend for async tests, the demo server, and an in-memory client."""

from __future__ import annotations

import pytest

from hexmcp.core import McpServer, ServerOptions

from .fixtures.demo_server import build_demo_server
from .support.peer import CoreClient, RecordingPeer


def pytest_addoption(parser: pytest.Parser) -> None:
    # Declared here because only the root conftest of testpaths may add options; used by tests/conformance.
    parser.addoption("--target", action="append", default=[], metavar="SPEC",
                     help="run the conformance properties against this MCP server instead of hexmcp's own: "
                          "'stdio:CMD ARGS', 'http://host:port/mcp', 'rest:http://…', 'ws://…/ws', 'ws+mcp://…/ws'")


@pytest.fixture
def anyio_backend() -> str:
    # The core schedules with asyncio (ensure_future, asyncio.timeout): test on the loop it is written for.
    return "asyncio"


@pytest.fixture
def demo_server() -> McpServer:
    return build_demo_server(ServerOptions(page_size=2))


@pytest.fixture
def peer() -> RecordingPeer:
    return RecordingPeer()


@pytest.fixture
def client(demo_server: McpServer, peer: RecordingPeer) -> CoreClient:
    return CoreClient(demo_server, peer)


@pytest.fixture
def stdio_server():
    """The demo server over stdio, killed at the end of the test whatever happened."""
    from .support.wire import StdioServer

    started: list[StdioServer] = []

    def start(*args: str) -> StdioServer:
        server = StdioServer(args=list(args))
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()
