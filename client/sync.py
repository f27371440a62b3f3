"""`SyncClient`: `McpClient` for code without an event loop (scripts, notebooks, the REPL).

The async client runs on an event loop in a daemon thread that this object owns; each method submits
one coroutine there and waits for its result, so callbacks (progress, notifications) run on that
loop's thread, not the caller's.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Coroutine, TypeVar

from hexmcp.core import models

from .mcp_client import McpClient
from .target import Target

T = TypeVar("T")


class SyncClient:
    def __init__(self, target: Target | str, **options: Any) -> None:
        """Connects at once; `options` are `McpClient`'s. Use as a context manager, or call `close()`."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="hexmcp-client", daemon=True)
        self._thread.start()
        self.client = McpClient(target, **options)
        try:
            self._run(self.client.connect())
        except BaseException:
            self._stop()
            raise

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._loop.is_running():
            try:
                self._run(self.client.close())
            finally:
                self._stop()

    def _stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    @property
    def protocol_version(self) -> str | None:
        return self.client.protocol_version

    @property
    def server_info(self) -> models.Implementation | None:
        return self.client.server_info

    def request(self, method: str, params: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
        return self._run(self.client.request(method, params, **options))

    def ping(self) -> None:
        self._run(self.client.ping())

    def all_tools(self) -> list[models.Tool]:
        return self._run(self.client.all_tools())

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **options: Any) -> models.CallToolResult:
        return self._run(self.client.call_tool(name, arguments, **options))

    def all_resources(self) -> list[models.Resource]:
        return self._run(self.client.all_resources())

    def read_resource(self, uri: str) -> models.ReadResourceResult:
        return self._run(self.client.read_resource(uri))

    def all_prompts(self) -> list[models.Prompt]:
        return self._run(self.client.all_prompts())

    def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> models.GetPromptResult:
        return self._run(self.client.get_prompt(name, arguments))
