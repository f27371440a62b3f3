"""`ServerView`: what a `Session` and the method handlers use of the server, as a protocol.

`server.py` imports `session.py` to open sessions; were the session to import the server back (even for
annotations only), the two would form a circle. Both depend on this protocol instead, which `McpServer`
satisfies. It lives apart from `ports.py` because it names the registries, and the registries import
the ports (tools -> context -> ports): in `ports.py` it would close that circle.
"""

from __future__ import annotations

from typing import Any, Protocol

from .models import Implementation
from .observation import RequestObserver
from .options import ServerOptions
from .prompts import PromptRegistry
from .request_state import RequestStateSealer
from .resources import ResourceRegistry
from .subscriptions import SubscriptionHub
from .tasks.runner import TaskRunner
from .tools import ToolRegistry


class ServerView(Protocol):
    """What a session and its method handlers use of `McpServer`."""

    info: Implementation
    instructions: str | None
    options: ServerOptions
    tools: ToolRegistry
    resources: ResourceRegistry
    prompts: PromptRegistry
    sealer: RequestStateSealer
    subscriptions: SubscriptionHub
    observers: list[RequestObserver]
    refusal_observers: list[RequestObserver]
    tasks: TaskRunner

    def capabilities(self, version: str) -> dict[str, Any]:
        """The capabilities the server declares at `version`."""
        ...
