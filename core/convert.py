"""cattrs converters: model objects to wire dicts for one protocol version, and wire dicts back.

One factory builds a converter per version (cached): camelCase names, `meta` as `_meta`, None
omitted, and fields newer than the version dropped. Content kinds a version lacks are degraded to
text so an older client still sees something meaningful instead of an invalid message.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from . import models, versions


def wire_name(attribute_name: str) -> str:
    if attribute_name == "meta":
        return "_meta"
    head, *rest = attribute_name.split("_")
    return head + "".join(part.title() for part in rest)


def _strict(kind: type, name: str):
    def structure(value: Any, _type: Any) -> Any:
        if isinstance(value, bool) and kind is not bool:
            raise TypeError(f"expected {name}, got boolean")
        if kind is float and isinstance(value, int):
            return float(value)
        if not isinstance(value, kind):
            raise TypeError(f"expected {name}, got {type(value).__name__}")
        return value

    return structure


def _install_strict_primitives(converter: cattrs.Converter) -> None:
    """cattrs would turn 1 into "1" and "yes" into True; a protocol must reject such values instead."""
    for kind, name in ((str, "string"), (int, "integer"), (float, "number"), (bool, "boolean")):
        converter.register_structure_hook(kind, _strict(kind, name))
    converter.register_structure_hook(Any, lambda value, _type: value)


def _structure_content(converter: cattrs.Converter):
    kinds = {"text": models.TextContent, "image": models.ImageContent, "audio": models.AudioContent,
             "resource": models.EmbeddedResource, "resource_link": models.ResourceLink}

    def structure(value: Any, _type: Any) -> Any:
        if not isinstance(value, dict) or value.get("type") not in kinds:
            raise ValueError(f"unknown content block type {value.get('type') if isinstance(value, dict) else value!r}")
        return converter.structure(value, kinds[value["type"]])

    return structure


def _structure_resource_contents(converter: cattrs.Converter):
    def structure(value: Any, _type: Any) -> Any:
        if isinstance(value, dict) and "blob" in value:
            return converter.structure(value, models.BlobResourceContents)
        return converter.structure(value, models.TextResourceContents)

    return structure


def make_structure_converter() -> cattrs.Converter:
    """Wire dicts to models (and params classes), strict about primitive types."""
    converter = cattrs.Converter(forbid_extra_keys=False)
    _install_strict_primitives(converter)

    def attrs_hook(cls: type) -> Any:
        overrides = {a.name: override(rename=wire_name(a.name)) for a in attrs.fields(cls)}
        return make_dict_structure_fn(cls, converter, **overrides)

    converter.register_structure_hook_factory(attrs.has, attrs_hook)
    converter.register_structure_hook(models.ContentBlock, _structure_content(converter))
    converter.register_structure_hook(models.ResourceContents, _structure_resource_contents(converter))
    return converter


def _field_omitted(attribute: attrs.Attribute, version: str) -> bool:
    since = attribute.metadata.get("since")
    return since is not None and version < since


def _degrade_to_text(converter: cattrs.Converter, version: str):
    """Resource links and audio are unknown before 2025-06-18 / 2025-03-26: say what they were."""
    def unstructure(block: Any) -> dict[str, Any]:
        if isinstance(block, models.ResourceLink):
            text = f"Resource: {block.title or block.name} <{block.uri}>"
        else:
            text = f"[audio content ({block.mime_type}) not supported by protocol version {version}]"
        return converter.unstructure(models.TextContent(text=text))

    return unstructure


def _json_object(value: dict[str, Any]) -> dict[str, Any]:
    return value


def _content_blocks(converter: cattrs.Converter):
    """`list[ContentBlock]` (every tool result) without cattrs' generic list walk and union dispatch: each
    block goes through its own class's hook, the one the union would pick (its runtime class), looked up
    once per class, since every tool result comes through here."""
    hooks: dict[type, Any] = {}

    def unstructure(blocks: list[Any]) -> list[Any]:
        wire = []
        for block in blocks:
            hook = hooks.get(type(block))
            if hook is None:
                hook = hooks[type(block)] = converter.get_unstructure_hook(type(block))
            wire.append(hook(block))
        return wire

    return unstructure


@functools.cache
def unstructure_converter(version: str) -> cattrs.Converter:
    converter = cattrs.Converter()

    def attrs_hook(cls: type) -> Any:
        overrides = {
            a.name: override(omit=True) if _field_omitted(a, version)
            else override(rename=wire_name(a.name), omit_if_default=a.default is None)
            for a in attrs.fields(cls)
        }
        return make_dict_unstructure_fn(cls, converter, **overrides)

    converter.register_unstructure_hook_factory(attrs.has, attrs_hook)
    # Fields typed as JSON objects (structured results, schemas, _meta, capabilities) already hold plain
    # JSON values: walking them would cost cattrs time on every result, only to return an equal copy.
    converter.register_unstructure_hook_func(lambda kind: kind == dict[str, models.JSON], _json_object)
    converter.register_unstructure_hook_func(lambda kind: kind == list[models.ContentBlock], _content_blocks(converter))
    feats = versions.features(version)
    if not feats.resource_links:
        converter.register_unstructure_hook(models.ResourceLink, _degrade_to_text(converter, version))
    if not feats.audio_content:
        converter.register_unstructure_hook(models.AudioContent, _degrade_to_text(converter, version))
    return converter


structure_converter = make_structure_converter()


def to_wire(obj: Any, version: str) -> Any:
    return unstructure_converter(version).unstructure(obj)


def from_wire(data: Any, cls: Any) -> Any:
    return structure_converter.structure(data, cls)
