"""What the suite talks to: `--target` specs, hexmcp's own servers by default, and a pool of connections.

`--target` forms (repeatable):
- `stdio:COMMAND ARGS...` — spawn the command, speak newline-delimited JSON on its pipes (cwd: the repo);
- `http://HOST:PORT/mcp` — Streamable HTTP; `rest:http://HOST:PORT/mcp` — the REST dialect;
- `ws://HOST:PORT/ws` — WebSocket, ChatGPT dialect; `ws+mcp://HOST:PORT/ws` — the `mcp` subprotocol.

Without `--target` the suite starts hexmcp's demo server (tests/fixtures/demo_server.py) itself: a
stdio subprocess, and one in-process uvicorn serving Streamable HTTP, REST and WebSocket (`/ws`, both
dialects) from one `create_app`, as `hexmcp serve` would.

A `Target` hands out one shared, initialized connection per protocol version (reused by every example
of every property, replaced when a property finds it dead) and fresh ones for the lifecycle test.
"""

from __future__ import annotations

import shlex
import sys
from typing import Any, Callable

from hexmcp.core import versions

from .deadlines import ServerHung
from .drivers import Closed, Driver, HttpDriver, RestDriver, StdioDriver, WsDriver

DEMO_STDIO = [sys.executable, "-m", "tests.fixtures.demo_server"]
DEFAULT_TARGETS = ("stdio", "http", "rest", "ws-chatgpt", "ws-mcp")
STREAM_TARGETS = ("stdio", "http", "ws-chatgpt", "ws-mcp")  # REST has no sessions or notifications


class Target:
    def __init__(self, name: str, connect: Callable[[], Driver], *, hexmcp: bool = False,
                 stateless_versions: tuple[str, ...] = ()) -> None:
        self.name = name
        self.connect = connect
        self.hexmcp = hexmcp
        """True for hexmcp's own servers: hexmcp-specific expectations (known bugs, demo tools) apply."""
        self.versions = (*versions.HANDSHAKE_VERSIONS, *stateless_versions)
        self._shared: dict[str, Driver] = {}
        self._tools: list[dict[str, Any]] | None = None
        self.hung: str | None = None
        """Set (by conftest.py) when a property found this target hung: later ones fail at once, naming it."""

    def _not_hung(self) -> None:
        if self.hung is not None:
            raise ServerHung(f"{self.name}: not tried, the server hung in an earlier property: {self.hung}")

    def fresh(self) -> Driver:
        self._not_hung()
        return self.connect()

    def shared(self, version: str = versions.LATEST_HANDSHAKE_VERSION) -> Driver:
        self._not_hung()
        driver = self._shared.get(version)
        if driver is None or not driver.alive():
            if driver is not None:
                _quietly_close(driver)
            driver = self.connect()
            driver.initialize(version)
            self._shared[version] = driver
        driver.log.clear()
        return driver

    def restart(self, version: str = versions.LATEST_HANDSHAKE_VERSION) -> None:
        driver = self._shared.pop(version, None)
        if driver is not None:
            _quietly_close(driver)

    def tools(self) -> list[dict[str, Any]]:
        """The target's tools (first page), asked once."""
        if self._tools is None:
            driver = self.shared()
            answer = driver.request("tools/list", {})
            self._tools = list(answer["result"].get("tools", [])) if answer and "result" in answer else []
        return self._tools

    def close(self) -> None:
        for driver in self._shared.values():
            _quietly_close(driver)
        self._shared.clear()


def _quietly_close(driver: Driver) -> None:
    try:
        driver.close()
    except (Closed, OSError, RuntimeError):
        pass


def from_spec(spec: str) -> Target:
    """A `--target` value → a Target; see the module docstring for the forms."""
    if spec.startswith("stdio:"):
        command = shlex.split(spec[len("stdio:"):])
        return Target(spec, lambda: StdioDriver(command))
    if spec.startswith("rest:"):
        url = spec[len("rest:"):]
        return Target(spec, lambda: RestDriver(url))
    if spec.startswith(("http://", "https://")):
        return Target(spec, lambda: HttpDriver(spec))
    if spec.startswith("ws+mcp://"):
        url = "ws://" + spec[len("ws+mcp://"):]
        return Target(spec, lambda: WsDriver(url, subprotocol="mcp"))
    if spec.startswith(("ws://", "wss://")):
        return Target(spec, lambda: WsDriver(spec))
    raise ValueError(f"unknown --target {spec!r}: use stdio:CMD, http://…, rest:http://…, ws://… or ws+mcp://…")


class HexmcpServers:
    """hexmcp's demo server on every transport, started on first use and stopped at the end of the session.

    `build` and `stdio` serve another server instead: a function building it for the in-process HTTP and
    WebSocket servers, and the command serving the same one on stdio."""

    def __init__(self, build: Callable[[], Any] | None = None, stdio: list[str] = DEMO_STDIO) -> None:
        self._build = build
        self._stdio = stdio
        self._live: Any = None
        self._context: Any = None

    def _http(self) -> Any:
        if self._live is None:
            from hexmcp.adapters.ws import WsConfig, WsEndpoint

            from ..adapters.http_live import live_server
            from ..fixtures.demo_server import build_demo_server

            server = (self._build or build_demo_server)()
            self._context = live_server(server, extra_routes={"/ws": WsEndpoint(server, WsConfig())})
            self._live = self._context.__enter__()
        return self._live

    def target(self, name: str) -> Target:
        if name == "stdio":
            return Target(name, lambda: StdioDriver(self._stdio), hexmcp=True)
        live = self._http()
        ws_url = f"ws://127.0.0.1:{live.config.port}/ws"
        connect: dict[str, Callable[[], Driver]] = {
            "http": lambda: HttpDriver(live.url),
            "rest": lambda: RestDriver(live.url),
            "ws-chatgpt": lambda: WsDriver(ws_url),
            "ws-mcp": lambda: WsDriver(ws_url, subprotocol="mcp"),
        }
        stateless = versions.STATELESS_VERSIONS if name == "http" else ()
        return Target(name, connect[name], hexmcp=True, stateless_versions=stateless)

    def stop(self) -> None:
        if self._context is not None:
            self._context.__exit__(None, None, None)
            self._context = self._live = None
