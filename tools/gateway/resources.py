"""The model catalogue and the categories as resources.

`hexmcp://models` is the whole catalogue (JSON); each model is also a resource of its own,
`hexmcp://models/<id>` (the id percent-encoded, since ids hold `/`), so when the gateway's list changes
the registry broadcasts `notifications/resources/list_changed` once a model is added or dropped (not when
only its entry changes: its listing is the same), and the catalogue itself gets
`notifications/resources/updated`. Templates `hexmcp://models/{model}` and
`hexmcp://categories/{category}` complete their argument.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, unquote

from hexmcp.core import ErrorCode, McpServer, ProtocolError, models
from hexmcp.core.registrar import Registrar
from hexmcp.core.tools import json_text

from .completers import Completer
from .service import CatalogueEntry, GatewayService

CATALOGUE_URI = "hexmcp://models"
MODEL_TEMPLATE = "hexmcp://models/{model}"
CATEGORY_TEMPLATE = "hexmcp://categories/{category}"
JSON_TYPE = "application/json"


def model_uri(model_id: str) -> str:
    return f"{CATALOGUE_URI}/{quote(model_id, safe='')}"


class ModelResources:
    """Keeps the per-model resources in step with the catalogue: they come and go with it, so they are
    added to and removed from the server's registry directly, not declared through the registrar."""

    def __init__(self, server: McpServer, service: GatewayService) -> None:
        self._server = server
        self._service = service
        self._published: dict[str, dict[str, Any]] = {}

    def register(self, registrar: Registrar, model_names: Completer, category_names: Completer) -> None:
        """The catalogue and the two templates; the per-model resources follow the catalogue (`sync`)."""
        registrar.resource(CATALOGUE_URI, name="models", title="Models", mime_type=JSON_TYPE,
                           description="The models the routing policy can choose, with provider and "
                                       "capabilities")(self._read_catalogue)
        registrar.resource(MODEL_TEMPLATE, name="model", title="A model of the catalogue", mime_type=JSON_TYPE,
                           description="One model by id (percent-encoded): provider, capabilities, the categories "
                                       "routed to it", completer=model_names)(self._read_model)
        registrar.resource(CATEGORY_TEMPLATE, name="category", title="A category and its routing", mime_type=JSON_TYPE,
                           description="A category's description, system prompt, recommended model and reasoning "
                                       "policy", completer=category_names)(self._read_category)

    async def sync(self) -> bool:
        """Publish the catalogue as it is known now; True when something changed (and was announced)."""
        current = {entry.id: entry.wire() for entry in await self._service.entries()}
        if current == self._published:
            return False
        with self._server.resources.batch():  # one list_changed, and only if the listed models changed
            for gone in self._published.keys() - current.keys():
                self._server.resources.remove(model_uri(gone))
            for model_id, wire in current.items():
                if self._published.get(model_id) != wire:
                    self._server.resources.add(_model_resource(model_id), self._reader_for(model_id))
                    if model_id in self._published:
                        self._server.notify_resource_updated(model_uri(model_id))
        self._published = current
        self._server.notify_resource_updated(CATALOGUE_URI)
        return True

    async def _read_catalogue(self) -> str:
        return json_text({"models": [entry.wire() for entry in await self._service.entries()]})

    def _reader_for(self, model_id: str) -> Any:
        async def read() -> str:
            return json_text(await self._entry(model_id))
        return read

    async def _read_model(self, model: str) -> str:
        return json_text(await self._entry(unquote(model)))

    async def _entry(self, model_id: str) -> dict[str, Any]:
        entries: list[CatalogueEntry] = await self._service.entries()
        for entry in entries:
            if entry.id == model_id:
                return entry.wire()
        raise ProtocolError(ErrorCode.RESOURCE_NOT_FOUND, f"unknown model {model_id!r}", {"uri": model_uri(model_id)})

    async def _read_category(self, category: str) -> str:
        name = unquote(category)
        routing = self._service.routing
        for route in (await routing.categories()) if routing is not None else ():
            if route.name == name:
                return json_text({"name": route.name, "description": route.description,
                                  "systemPrompt": route.system_prompt,
                                  "model": self._service.settings.routing.get(route.name) or route.model
                                  or self._service.settings.default_model or routing.default_model,
                                  "useReasoning": route.use_reasoning, "reasoningEffort": route.reasoning_effort})
        raise ProtocolError(ErrorCode.RESOURCE_NOT_FOUND, f"unknown category {name!r}",
                            {"uri": CATEGORY_TEMPLATE.replace("{category}", category)})


def _model_resource(model_id: str) -> models.Resource:
    return models.Resource(uri=model_uri(model_id), name=model_id, title=f"Model {model_id}", mime_type=JSON_TYPE)
