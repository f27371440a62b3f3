"""MCP messages as frozen attrs value objects.

Attribute names are snake_case; `convert.py` renames them to the wire's camelCase (and `meta` to
`_meta`). A field that a protocol version lacks carries `since(...)` metadata, and the per-version
converter leaves it out for older versions: results are built once and shaped for each peer.
"""

from __future__ import annotations

from typing import Any, Literal, Union

import attrs

from . import versions

JSON = Any
Meta = dict[str, Any]


def since(version: str, **kwargs: Any) -> Any:
    """A field that exists on the wire only from `version` on (None by default, omitted when None)."""
    kwargs.setdefault("default", None)
    return attrs.field(metadata={"since": version}, **kwargs)


def optional(**kwargs: Any) -> Any:
    kwargs.setdefault("default", None)
    return attrs.field(**kwargs)


# --- descriptive pieces -----------------------------------------------------------------------------

@attrs.frozen(kw_only=True)
class Icon:
    src: str
    mime_type: str | None = optional()
    sizes: list[str] | None = optional()


@attrs.frozen(kw_only=True)
class Implementation:
    name: str
    version: str
    title: str | None = since(versions.V2025_06_18)
    description: str | None = since(versions.V2025_11_25)
    website_url: str | None = since(versions.V2025_11_25)
    icons: list[Icon] | None = since(versions.V2025_11_25)


@attrs.frozen(kw_only=True)
class Annotations:
    audience: list[Literal["user", "assistant"]] | None = optional()
    priority: float | None = optional()
    last_modified: str | None = since(versions.V2025_06_18)


@attrs.frozen(kw_only=True)
class ToolAnnotations:
    title: str | None = optional()
    read_only_hint: bool | None = optional()
    destructive_hint: bool | None = optional()
    idempotent_hint: bool | None = optional()
    open_world_hint: bool | None = optional()


# --- content --------------------------------------------------------------------------------------

@attrs.frozen(kw_only=True)
class TextContent:
    text: str
    type: Literal["text"] = "text"
    annotations: Annotations | None = since(versions.V2025_03_26)
    meta: Meta | None = since(versions.V2025_06_18)


@attrs.frozen(kw_only=True)
class ImageContent:
    data: str
    mime_type: str
    type: Literal["image"] = "image"
    annotations: Annotations | None = since(versions.V2025_03_26)
    meta: Meta | None = since(versions.V2025_06_18)


@attrs.frozen(kw_only=True)
class AudioContent:
    data: str
    mime_type: str
    type: Literal["audio"] = "audio"
    annotations: Annotations | None = optional()
    meta: Meta | None = since(versions.V2025_06_18)


@attrs.frozen(kw_only=True)
class TextResourceContents:
    uri: str
    text: str
    mime_type: str | None = optional()
    meta: Meta | None = since(versions.V2025_06_18)


@attrs.frozen(kw_only=True)
class BlobResourceContents:
    uri: str
    blob: str
    mime_type: str | None = optional()
    meta: Meta | None = since(versions.V2025_06_18)


ResourceContents = Union[TextResourceContents, BlobResourceContents]


@attrs.frozen(kw_only=True)
class EmbeddedResource:
    resource: ResourceContents
    type: Literal["resource"] = "resource"
    annotations: Annotations | None = since(versions.V2025_03_26)
    meta: Meta | None = since(versions.V2025_06_18)


@attrs.frozen(kw_only=True)
class ResourceLink:
    uri: str
    name: str
    type: Literal["resource_link"] = "resource_link"
    title: str | None = optional()
    description: str | None = optional()
    mime_type: str | None = optional()
    size: int | None = optional()
    annotations: Annotations | None = optional()
    icons: list[Icon] | None = since(versions.V2025_11_25)
    meta: Meta | None = optional()


ContentBlock = Union[TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource]


# --- definitions a server lists -------------------------------------------------------------------

@attrs.frozen(kw_only=True)
class Tool:
    name: str
    input_schema: dict[str, JSON]
    description: str | None = optional()
    title: str | None = since(versions.V2025_06_18)
    output_schema: dict[str, JSON] | None = since(versions.V2025_06_18)
    annotations: ToolAnnotations | None = since(versions.V2025_03_26)
    icons: list[Icon] | None = since(versions.V2025_11_25)
    meta: Meta | None = since(versions.V2025_06_18)


@attrs.frozen(kw_only=True)
class Resource:
    uri: str
    name: str
    title: str | None = since(versions.V2025_06_18)
    description: str | None = optional()
    mime_type: str | None = optional()
    size: int | None = optional()
    annotations: Annotations | None = optional()
    icons: list[Icon] | None = since(versions.V2025_11_25)
    meta: Meta | None = since(versions.V2025_06_18)


@attrs.frozen(kw_only=True)
class ResourceTemplate:
    uri_template: str
    name: str
    title: str | None = since(versions.V2025_06_18)
    description: str | None = optional()
    mime_type: str | None = optional()
    annotations: Annotations | None = optional()
    icons: list[Icon] | None = since(versions.V2025_11_25)
    meta: Meta | None = since(versions.V2025_06_18)


@attrs.frozen(kw_only=True)
class PromptArgument:
    name: str
    title: str | None = since(versions.V2025_06_18)
    description: str | None = optional()
    required: bool | None = optional()


@attrs.frozen(kw_only=True)
class Prompt:
    name: str
    title: str | None = since(versions.V2025_06_18)
    description: str | None = optional()
    arguments: list[PromptArgument] | None = optional()
    icons: list[Icon] | None = since(versions.V2025_11_25)
    meta: Meta | None = since(versions.V2025_06_18)


@attrs.frozen(kw_only=True)
class PromptMessage:
    role: Literal["user", "assistant"]
    content: ContentBlock


# --- results --------------------------------------------------------------------------------------

@attrs.frozen(kw_only=True)
class InitializeResult:
    protocol_version: str
    capabilities: dict[str, JSON]
    server_info: Implementation
    instructions: str | None = optional()
    meta: Meta | None = optional()


@attrs.frozen(kw_only=True)
class DiscoverResult:
    supported_versions: list[str]
    capabilities: dict[str, JSON]
    instructions: str | None = optional()
    meta: Meta | None = optional()


@attrs.frozen(kw_only=True)
class EmptyResult:
    meta: Meta | None = optional()


@attrs.frozen(kw_only=True)
class ListToolsResult:
    tools: list[Tool]
    next_cursor: str | None = optional()
    meta: Meta | None = optional()


@attrs.frozen(kw_only=True)
class CallToolResult:
    content: list[ContentBlock]
    structured_content: dict[str, JSON] | None = since(versions.V2025_06_18)
    is_error: bool | None = optional()
    meta: Meta | None = optional()


@attrs.frozen(kw_only=True)
class ListResourcesResult:
    resources: list[Resource]
    next_cursor: str | None = optional()
    meta: Meta | None = optional()


@attrs.frozen(kw_only=True)
class ListResourceTemplatesResult:
    resource_templates: list[ResourceTemplate]
    next_cursor: str | None = optional()
    meta: Meta | None = optional()


@attrs.frozen(kw_only=True)
class ReadResourceResult:
    contents: list[ResourceContents]
    meta: Meta | None = optional()


@attrs.frozen(kw_only=True)
class ListPromptsResult:
    prompts: list[Prompt]
    next_cursor: str | None = optional()
    meta: Meta | None = optional()


@attrs.frozen(kw_only=True)
class GetPromptResult:
    messages: list[PromptMessage]
    description: str | None = optional()
    meta: Meta | None = optional()


@attrs.frozen(kw_only=True)
class Completion:
    values: list[str]
    total: int | None = optional()
    has_more: bool | None = optional()


@attrs.frozen(kw_only=True)
class CompleteResult:
    completion: Completion
    meta: Meta | None = optional()


@attrs.frozen(kw_only=True)
class InputRequiredResult:
    """2026-07-28: the server needs answers from the client before it can finish the request."""

    input_requests: dict[str, dict[str, JSON]] | None = optional()
    request_state: str | None = optional()
    meta: Meta | None = optional()


@attrs.frozen(kw_only=True)
class SubscriptionsListenResult:
    meta: Meta | None = optional()


Result = Union[
    InitializeResult, DiscoverResult, EmptyResult, ListToolsResult, CallToolResult, ListResourcesResult,
    ListResourceTemplatesResult, ReadResourceResult, ListPromptsResult, GetPromptResult, CompleteResult,
    InputRequiredResult, SubscriptionsListenResult,
]

# Results a 2026-07-28 client may cache: they carry `ttlMs` and `cacheScope` there.
CACHEABLE_RESULTS = (DiscoverResult, ListToolsResult, ListResourcesResult, ListResourceTemplatesResult,
                     ReadResourceResult, ListPromptsResult)

ALL_MODELS = (
    Icon, Implementation, Annotations, ToolAnnotations, TextContent, ImageContent, AudioContent,
    TextResourceContents, BlobResourceContents, EmbeddedResource, ResourceLink, Tool, Resource,
    ResourceTemplate, PromptArgument, Prompt, PromptMessage, InitializeResult, DiscoverResult, EmptyResult,
    ListToolsResult, CallToolResult, ListResourcesResult, ListResourceTemplatesResult, ReadResourceResult,
    ListPromptsResult, GetPromptResult, Completion, CompleteResult, InputRequiredResult,
    SubscriptionsListenResult,
)
