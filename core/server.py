"""The server: what it offers (tools, resources, prompts) and the sessions that use it.

`McpServer` is the object an application builds and registers things on; each connection an adapter
accepts becomes a `Session` (session.py). The server tells open sessions when its lists change.
"""

from __future__ import annotations

import secrets
import weakref
from typing import TYPE_CHECKING, Any

import attrs

from . import models, versions
from .extensions import ExtensionHandler, ExtensionMethods
from .prompts import PromptRegistry
from .request_state import RequestStateSealer
from .resources import ResourceRegistry
from .subscriptions import SubscriptionHub
from .tools import ToolRegistry

if TYPE_CHECKING:
    from .ports import Peer
    from .session import Session


@attrs.frozen(kw_only=True)
class ServerOptions:
    page_size: int = 100
    """Items per page of every list."""
    cache_ttl_ms: int = 60_000
    """2026-07-28 cache hint on list/read/discover results."""
    cache_scope: str = "public"
    """2026-07-28 cache scope: nothing we list depends on who asks."""
    request_state_secret: bytes | None = None
    """Key that seals multi round-trip state; instances behind one load balancer must share it."""
    tool_timeout_s: float | None = None
    """Stop a tool that runs longer than this and report the timeout as a tool error."""
    validate_structured_output: bool = True


class McpServer:
    def __init__(self, name: str, version: str, *, title: str | None = None, instructions: str | None = None,
                 options: ServerOptions | None = None) -> None:
        self.info = models.Implementation(name=name, version=version, title=title)
        self.instructions = instructions
        self.options = options or ServerOptions()
        self.tools = ToolRegistry()
        self.resources = ResourceRegistry()
        self.prompts = PromptRegistry()
        self.extensions = ExtensionMethods()
        self.sealer = RequestStateSealer(self.options.request_state_secret or secrets.token_bytes(32))
        self._sessions: weakref.WeakSet[Session] = weakref.WeakSet()
        self.subscriptions = SubscriptionHub()
        self.tools.on_change(lambda: self._broadcast_list_changed("tools"))
        self.resources.listeners.append(lambda: self._broadcast_list_changed("resources"))
        self.prompts.listeners.append(lambda: self._broadcast_list_changed("prompts"))
        self.tool = self.tools.tool
        self.prompt = self.prompts.prompt

    def capabilities(self, version: str) -> dict[str, Any]:
        caps: dict[str, Any] = {
            "tools": {"listChanged": True},
            "resources": {"listChanged": True, **({"subscribe": True} if versions.features(version).handshake else {})},
            "prompts": {"listChanged": True},
            "logging": {},
        }
        if version >= versions.V2025_03_26:
            caps["completions"] = {}
        if experimental := self.extensions.experimental():
            caps["experimental"] = experimental
        return caps

    def add_method(self, name: str, handler: ExtensionHandler, *, capability: dict[str, Any] | None = None) -> None:
        """Serve a method MCP does not define (extensions.py), advertised under `capabilities.experimental`."""
        self.extensions.add(name, handler, capability=capability)

    def open_session(self, *, session_id: str, peer: Peer, assume_version: str | None = None) -> Session:
        """A new connection. `assume_version` skips the handshake (stateless HTTP serving handshake versions)."""
        from .session import Session

        session = Session(self, session_id=session_id, peer=peer, assume_version=assume_version)
        self._sessions.add(session)
        return session

    def sessions(self) -> list[Session]:
        return list(self._sessions)

    def notify_resource_updated(self, uri: str) -> None:
        """Tell subscribers (handshake sessions and 2026-07-28 listeners) that `uri` changed."""
        for session in self.sessions():
            session.resource_updated(uri)
        self.subscriptions.resource_updated(uri)

    def notify_list_changed(self, kind: str) -> None:
        """Tell clients that the `kind` list (tools, prompts, resources) changed."""
        self._broadcast_list_changed(kind)

    def _broadcast_list_changed(self, kind: str) -> None:
        for session in self.sessions():
            session.list_changed(kind)
        self.subscriptions.list_changed(kind)

    async def shutdown(self) -> None:
        for session in self.sessions():
            await session.close()
