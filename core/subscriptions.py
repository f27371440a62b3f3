"""2026-07-28 `subscriptions/listen`: long-lived streams of the notifications a client opted in to.

Subscriptions belong to the server, not to a session: on stateless HTTP every request is its own
session, and a tool call on one request must reach listeners opened by others. Each notification
carries the subscription's id in `_meta` so the client can tell its streams apart.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import attrs

from .params import SubscriptionFilter
from .ports import Peer, RequestKey

META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
_LIST_KINDS = {"tools": "tools_list_changed", "prompts": "prompts_list_changed",
               "resources": "resources_list_changed"}


@attrs.define(eq=False)
class Subscription:
    peer: Peer
    request_key: RequestKey | None
    wanted: SubscriptionFilter
    subscription_id: str | int

    def meta(self) -> dict[str, Any]:
        return {META_SUBSCRIPTION_ID: self.subscription_id}

    def acknowledgement(self) -> dict[str, Any]:
        agreed: dict[str, Any] = {}
        for kind, field in _LIST_KINDS.items():
            if getattr(self.wanted, field):
                agreed[f"{kind}ListChanged"] = True
        if self.wanted.resource_subscriptions:
            agreed["resourceSubscriptions"] = list(self.wanted.resource_subscriptions)
        if self.wanted.task_ids is not None:
            agreed["taskIds"] = list(self.wanted.task_ids)
        return {"notifications": agreed, "_meta": self.meta()}

    def wants_list(self, kind: str) -> bool:
        return bool(getattr(self.wanted, _LIST_KINDS[kind]))

    def wants_resource(self, uri: str) -> bool:
        return uri in (self.wanted.resource_subscriptions or ())


class SubscriptionHub:
    def __init__(self) -> None:
        self._open: set[Subscription] = set()
        self._ids = itertools.count(1)

    def open(self, peer: Peer, request_key: RequestKey | None, wanted: SubscriptionFilter) -> Subscription:
        subscription_id = request_key if isinstance(request_key, (str, int)) else f"sub-{next(self._ids)}"
        subscription = Subscription(peer=peer, request_key=request_key, wanted=wanted,
                                    subscription_id=subscription_id)
        self._open.add(subscription)
        return subscription

    def close(self, subscription: Subscription) -> None:
        self._open.discard(subscription)

    def __len__(self) -> int:
        return len(self._open)

    def list_changed(self, kind: str) -> None:
        for subscription in list(self._open):
            if subscription.wants_list(kind):
                self._send(subscription, f"notifications/{kind}/list_changed", {})

    def task_changed(self, task_id: str, task: dict[str, Any]) -> None:
        """A task's new state (its `tasks/get` answer, `task`) to the listeners agreed to hear about it."""
        for subscription in list(self._open):
            if task_id in (subscription.wanted.task_ids or ()):
                self._send(subscription, "notifications/tasks", task)

    def resource_updated(self, uri: str) -> None:
        for subscription in list(self._open):
            if subscription.wants_resource(uri):
                self._send(subscription, "notifications/resources/updated", {"uri": uri})

    @staticmethod
    def _send(subscription: Subscription, method: str, params: dict[str, Any]) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        asyncio.ensure_future(subscription.peer.notify(method, {**params, "_meta": subscription.meta()},
                                                       related=subscription.request_key))
