"""Resources: fixed URIs and URI templates, each read by an async function.

A reader returns text (str), bytes (sent as base64 `blob`), or ready-made resource contents.
Templates use RFC 6570 level-1 expressions (`file:///{path}`); each variable matches up to the next
literal character.
"""

from __future__ import annotations

import base64
import re
from typing import Any, Awaitable, Callable, ContextManager

import attrs

from . import models
from .errors import ErrorCode, ProtocolError
from .list_changes import ListChanges

Reader = Callable[..., Awaitable[Any]]
Completer = Callable[[str, str, dict[str, str]], Awaitable[list[str]]]


@attrs.frozen(kw_only=True)
class RegisteredTemplate:
    definition: models.ResourceTemplate
    pattern: re.Pattern[str]
    reader: Reader
    completer: Completer | None


def template_pattern(uri_template: str) -> re.Pattern[str]:
    parts = re.split(r"\{([A-Za-z0-9_]+)\}", uri_template)
    regex = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/?#]+)" for i, part in enumerate(parts))
    return re.compile(f"^{regex}$")


def as_contents(uri: str, value: Any, mime_type: str | None) -> list[models.ResourceContents]:
    if isinstance(value, (models.TextResourceContents, models.BlobResourceContents)):
        return [value]
    if isinstance(value, list):
        return value
    if isinstance(value, bytes):
        return [models.BlobResourceContents(uri=uri, blob=base64.b64encode(value).decode(), mime_type=mime_type)]
    return [models.TextResourceContents(uri=uri, text=str(value), mime_type=mime_type)]


class ResourceRegistry:
    def __init__(self) -> None:
        self._fixed: dict[str, tuple[models.Resource, Reader]] = {}
        self._templates: list[RegisteredTemplate] = []
        self._changes = ListChanges(lambda: (self.definitions(), self.template_definitions()))
        self.listeners = self._changes.listeners  # called when the listed resources change (once per `batch()`)

    def batch(self) -> ContextManager[None]:
        """Make many changes, tell the listeners once (one list_changed, not one per resource), and only if
        the lists differ at the end (a re-registration of the same resources tells nobody)."""
        return self._changes.batch()

    def add(self, resource: models.Resource, reader: Reader) -> None:
        previous = self._fixed.get(resource.uri)
        self._fixed[resource.uri] = (resource, reader)
        if previous is None or previous[0] != resource:  # a new reader alone lists nothing new
            self._changes.changed()

    def add_template(self, template: models.ResourceTemplate, reader: Reader,
                     completer: Completer | None = None) -> None:
        self._templates.append(RegisteredTemplate(definition=template, pattern=template_pattern(template.uri_template),
                                                  reader=reader, completer=completer))
        self._changes.changed()

    def remove(self, uri: str) -> None:
        if self._fixed.pop(uri, None) is not None:
            self._changes.changed()

    def remove_template(self, uri_template: str) -> None:
        kept = [t for t in self._templates if t.definition.uri_template != uri_template]
        if len(kept) != len(self._templates):
            self._templates = kept
            self._changes.changed()

    def definitions(self) -> list[models.Resource]:
        return [resource for resource, _ in self._fixed.values()]

    def template_definitions(self) -> list[models.ResourceTemplate]:
        return [t.definition for t in self._templates]

    def completer_for(self, uri_template: str) -> Completer | None:
        for template in self._templates:
            if template.definition.uri_template == uri_template:
                return template.completer
        return None

    async def read(self, uri: str) -> models.ReadResourceResult:
        if uri in self._fixed:
            resource, reader = self._fixed[uri]
            return models.ReadResourceResult(contents=as_contents(uri, await reader(), resource.mime_type))
        for template in self._templates:
            match = template.pattern.match(uri)
            if match:
                value = await template.reader(**match.groupdict())
                return models.ReadResourceResult(contents=as_contents(uri, value, template.definition.mime_type))
        raise ProtocolError(ErrorCode.RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
