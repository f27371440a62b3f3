"""The server: what it offers (tools, resources, prompts, methods) and the sessions that use it.

`McpServer` is the object an application builds and registers things on; each connection an adapter
accepts becomes a `Session` (session.py), handed this server (as the `ServerView` it needs) and the
server's method table. The server tells open sessions when its lists change.
"""

from __future__ import annotations

import secrets
import weakref
from typing import Any, Callable

from . import models, versions
from .extensions import ExtensionHandler, extension_route
from .handlers import ROUTES
from .observation import RequestObserver, hears_refusals
from .options import ServerOptions
from .ports import Peer
from .prompts import PromptRegistry
from .request_state import RequestStateSealer
from .resources import ResourceRegistry
from .routing import MethodTable
from .session import Session
from .subscriptions import SubscriptionHub
from .tasks.runner import TaskRunner
from .tasks.model import TASKS_EXTENSION, TaskLimits, TaskRecord, TaskStore
from .tools import ToolRegistry

__all__ = ["McpServer", "ServerOptions"]


class McpServer:
    def __init__(self, name: str, version: str, *, title: str | None = None, instructions: str | None = None,
                 options: ServerOptions | None = None) -> None:
        self.info = models.Implementation(name=name, version=version, title=title)
        self.instructions = instructions
        self.options = options or ServerOptions()
        self.tools = ToolRegistry()
        self.resources = ResourceRegistry()
        self.prompts = PromptRegistry()
        self._experimental: dict[str, dict[str, Any]] = {}  # capabilities.experimental: one entry per extension
        self.sealer = RequestStateSealer(self.options.request_state_secret or secrets.token_bytes(32))
        self._sessions: weakref.WeakSet[Session] = weakref.WeakSet()
        self.subscriptions = SubscriptionHub()
        self.tools.on_change(lambda: self._broadcast_list_changed("tools"))
        self.resources.listeners.append(lambda: self._broadcast_list_changed("resources"))
        self.prompts.listeners.append(lambda: self._broadcast_list_changed("prompts"))
        self.tool = self.tools.tool
        self.prompt = self.prompts.prompt
        self._methods = MethodTable.of(ROUTES)
        self.observers: list[RequestObserver] = []  # metrics, tracing, audit, rate limits: observation.py
        self.refusal_observers: list[RequestObserver] = []
        """The observers that hear refusals (`observation.report_refusal`): adapters report only when there are."""
        self._task_listeners: list[Callable[[TaskRecord], None]] = []  # kept across `use_task_store`
        self.tasks = self._task_runner(TaskRunner())
        """Runs long-running tools as tasks (the tasks extension); `use_task_store` swaps where they live."""

    def add_observer(self, observer: RequestObserver) -> None:
        """Have `observer` see every request and session end from now on, on every transport, in the order added."""
        self.observers.append(observer)
        if hears_refusals(observer):
            self.refusal_observers.append(observer)

    def on_task_change(self, listener: Callable[[TaskRecord], None]) -> None:
        """Call `listener` with every task record this process writes (created, moved, ended), whichever
        task store is in use now or later (the audit trail logs how each task ended)."""
        self._task_listeners.append(listener)
        self.tasks.on_change(listener)

    def use_task_store(self, store: TaskStore, limits: TaskLimits | None = None) -> None:
        """Keep task records in `store` (a shared one for stateless replicas) with these limits."""
        error_wire = self.tasks.error_wire
        self.tasks = self._task_runner(TaskRunner(store, limits or self.tasks.limits))
        self.tasks.error_wire = error_wire

    def _task_runner(self, runner: TaskRunner) -> TaskRunner:
        # Status notifications go from the process running the task to its subscriptions/listen streams.
        runner.on_change(lambda record: self.subscriptions.task_changed(record.task_id, record.wire()))
        for listener in self._task_listeners:
            runner.on_change(listener)
        return runner

    def add_method(self, method: str, handler: ExtensionHandler, *, capability: dict[str, Any] | None = None,
                   handshake: bool = True, stateless: bool = True) -> None:
        """Serve an extension method (`models/list`, say) on every transport, in sessions opened from now on.

        `handler(params, ctx)` gets the request's params as a JSON object and a `ToolContext`, and returns
        a result (a JSON object or an attrs model) or raises `ProtocolError`. `capability` is what
        `capabilities.experimental[method]` says about it (default `{}`). Served on handshake versions
        and/or 2026-07-28 as the flags say. The MCP methods themselves cannot be replaced.
        """
        if method in ROUTES:
            raise ValueError(f"{method!r} is an MCP method; it cannot be replaced")
        if not (handshake or stateless):
            raise ValueError(f"{method!r} would be served on no protocol version")
        route = extension_route(handler, handshake=handshake, stateless=stateless)
        self._methods = self._methods.with_method(method, route)
        self._experimental[method] = dict(capability or {})

    def capabilities(self, version: str) -> dict[str, Any]:
        caps: dict[str, Any] = {
            "tools": {"listChanged": True},
            "resources": {"listChanged": True, **({"subscribe": True} if versions.features(version).handshake else {})},
            "prompts": {"listChanged": True},
            "logging": {},
        }
        if version >= versions.V2025_03_26:
            caps["completions"] = {}
        if not versions.features(version).handshake:
            caps["extensions"] = {TASKS_EXTENSION: {}}
        if self._experimental:
            caps["experimental"] = {method: dict(cap) for method, cap in self._experimental.items()}
        return caps

    def open_session(self, *, session_id: str, peer: Peer, assume_version: str | None = None,
                     client_id: str | None = None, transport: str | None = None) -> Session:
        """A new connection. `assume_version` skips the handshake (stateless HTTP serving handshake versions);
        `client_id` names the client across its sessions (default: the session id); `transport` is the
        adapter's name for itself ("stdio", "http", "rest", "ws"), for observers."""
        session = Session(self, session_id=session_id, peer=peer, methods=self._methods,
                          assume_version=assume_version, client_id=client_id, transport=transport)
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
        await self.tasks.shutdown()
