"""`McpClient`: one async API over every transport, built on hexmcp's own framing and models.

Connecting negotiates the protocol version. A handshake version (2024-11-05 ... 2025-11-25) sends
`initialize` with the version asked for and accepts whichever handshake version the server answers
that we speak, down to 2024-11-05; anything else is `INCOMPATIBLE`. The stateless 2026-07-28 asks
`server/discover` instead, and then every request carries the `_meta` envelope (protocol version,
client capabilities, client info); a server that does not know `server/discover` is asked again
through the `initialize` handshake, so `protocol_version="2026-07-28"` works against every server.

Reads are retried (transport failures, timeouts, a busy server) with exponential backoff and jitter;
nothing else is, because a tool call may have had an effect before its answer was lost.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Coroutine

import attrs
import cattrs
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential, wait_random

from hexmcp.wire import jsonrpc
from hexmcp.core import ErrorCode, models, versions
from hexmcp.core.convert import from_wire, wire_name
from hexmcp.core.meta import META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, META_SERVER_INFO

from .dispatcher import Dispatcher, NotificationHandler, ProgressCallback, RequestHandler
from .errors import ClientError, ClientErrorCode
from .target import Target
from .transports import MAX_MESSAGE_BYTES, Wire, wire_for

CLIENT_INFO = models.Implementation(name="hexmcp-client", version="0.1.0")
IDEMPOTENT = frozenset({"ping", "server/discover", "tools/list", "resources/list", "resources/templates/list",
                        "resources/read", "prompts/list"})
SERVER_BUSY = jsonrpc.ERROR_CODES[ErrorCode.SERVER_BUSY]
MAX_PAGES = 1000  # a server whose cursors never end is not followed forever
MAX_ITEMS = 10_000
"""Items of one paginated list (tools, resources, templates, prompts) taken from a server, across its pages:
each page is capped in bytes, but a thousand 16 MiB pages are not; 100,000 mounted tools cost 800 MB here."""
InvalidItem = Callable[[Any, str], None]
"""Told of each item of a list that breaks the protocol's schema (the item as sent, and why) when the
caller takes the rest rather than refusing the whole list."""


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How idempotent requests are retried: `attempts` in all, waits growing from `initial_s` to `max_s`."""

    attempts: int = 3
    initial_s: float = 0.1
    max_s: float = 2.0


def retryable(error: BaseException) -> bool:
    if not isinstance(error, ClientError):
        return False
    return error.code in (ClientErrorCode.UNREACHABLE, ClientErrorCode.TIMEOUT) or (
        error.code is ClientErrorCode.SERVER_ERROR and error.rpc_code == SERVER_BUSY)


class McpClient:
    def __init__(self, target: Target | str, *, auth_token: str | None = None,
                 protocol_version: str = versions.LATEST_HANDSHAKE_VERSION, timeout: float | None = 60.0,
                 retry: RetryPolicy = RetryPolicy(), client_info: models.Implementation = CLIENT_INFO,
                 capabilities: dict[str, Any] | None = None, wire: Wire | None = None,
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        """`timeout` is every request's default (None: wait forever); `wire` replaces the transport
        `target` names (tests, proxies); `max_message_bytes` bounds each message read from the server."""
        if protocol_version not in versions.FEATURES:
            raise ClientError(ClientErrorCode.USAGE, f"unknown protocol version {protocol_version!r} "
                                                     f"(known: {', '.join(versions.SUPPORTED_VERSIONS)})")
        self.target = Target.parse(target) if isinstance(target, str) else target
        self.wire = wire or wire_for(self.target, auth_token=auth_token, max_message_bytes=max_message_bytes)
        self.requested_version = protocol_version
        self.timeout = timeout
        self.retry = retry
        self.client_info = client_info
        self.capabilities = capabilities or {}
        self._dispatcher = Dispatcher(self.wire)
        self.protocol_version: str | None = None
        self.server_info: models.Implementation | None = None
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None

    @property
    def lost(self) -> asyncio.Event:
        """Set once the connection has ended (a stdio server exited, a socket closed) or `close()` ran."""
        return self._dispatcher.lost

    @property
    def stateless(self) -> bool:
        return self.protocol_version in versions.STATELESS_VERSIONS

    # --- lifecycle -------------------------------------------------------------------------------

    async def __aenter__(self) -> McpClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()

    async def connect(self) -> None:
        await self.wire.open(self._dispatcher)
        try:
            if self.requested_version in versions.STATELESS_VERSIONS and await self._discover():
                return
            await self._initialize(versions.LATEST_HANDSHAKE_VERSION
                                   if self.requested_version in versions.STATELESS_VERSIONS else self.requested_version)
        except BaseException:
            await self.close()
            raise

    async def _discover(self) -> bool:
        """Settle on the stateless version if the server offers it; False when it does not know discover."""
        try:
            result = await self._dispatcher.request("server/discover", self._envelope({}, self.requested_version),
                                                    timeout=self.timeout)
        except ClientError as error:
            if error.code is ClientErrorCode.SERVER_ERROR and error.rpc_code in (jsonrpc.METHOD_NOT_FOUND,
                                                                                 jsonrpc.INVALID_REQUEST):
                return False
            raise
        offered = result.get("supportedVersions") or []
        if self.requested_version not in offered:
            return False
        self._settle(self.requested_version, result.get("capabilities"), result.get("instructions"),
                     (result.get("_meta") or {}).get(META_SERVER_INFO))
        return True

    async def _initialize(self, version: str) -> None:
        params = {"protocolVersion": version, "capabilities": self.capabilities,
                  "clientInfo": {"name": self.client_info.name, "version": self.client_info.version}}
        result = await self._dispatcher.request("initialize", params, timeout=self.timeout)
        answered = result.get("protocolVersion")
        if answered not in versions.HANDSHAKE_VERSIONS:
            raise ClientError(ClientErrorCode.INCOMPATIBLE,
                              f"the server speaks protocol version {answered!r}; this client speaks "
                              f"{', '.join(versions.HANDSHAKE_VERSIONS)}")
        self._settle(answered, result.get("capabilities"), result.get("instructions"), result.get("serverInfo"))
        await self._dispatcher.notify("notifications/initialized")
        await self.wire.initialized()

    def _settle(self, version: str, capabilities: Any, instructions: Any, server_info: Any) -> None:
        self.protocol_version = version
        self.wire.negotiated(version)
        self.server_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.instructions = instructions if isinstance(instructions, str) else None
        try:
            self.server_info = from_wire(server_info, models.Implementation) if server_info else None
        except Exception:  # cattrs' validation errors: a server with odd serverInfo is still usable
            self.server_info = None

    async def close(self) -> None:
        await self._dispatcher.drain()
        self._dispatcher.closed(ClientError(ClientErrorCode.CLOSED, "the client is closed"))
        await self.wire.close()

    # --- generic requests --------------------------------------------------------------------------

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        """`handler(method, params)` for each notification `method` the server sends (`"*"`: all)."""
        self._dispatcher.on_notification(method, handler)

    def on_request(self, method: str, handler: RequestHandler) -> None:
        """Answer the server's `method` requests (e.g. `roots/list`) with `handler(params)`."""
        self._dispatcher.on_request(method, handler)

    def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None,
                progress: ProgressCallback | None = None) -> Coroutine[Any, Any, dict[str, Any]]:
        """The result of one request as the wire carries it (await it); idempotent methods are retried.

        A plain function handing back the dispatcher's coroutine rather than a coroutine of its own,
        which every call would otherwise pass through on its way in and out.
        """
        params = self._envelope(params or {}, self.protocol_version) if self.stateless else params or {}
        timeout = self.timeout if timeout is None else timeout
        if method not in IDEMPOTENT or self.retry.attempts <= 1:
            return self._dispatcher.request(method, params, timeout=timeout, progress=progress)
        return self._retried(method, params, timeout, progress)

    async def _retried(self, method: str, params: dict[str, Any], timeout: float | None,
                       progress: ProgressCallback | None) -> dict[str, Any]:
        async for attempt in AsyncRetrying(stop=stop_after_attempt(self.retry.attempts), reraise=True,
                                           wait=wait_exponential(multiplier=self.retry.initial_s, max=self.retry.max_s)
                                           + wait_random(0, self.retry.initial_s),
                                           retry=retry_if_exception(retryable)):
            with attempt:
                return await self._dispatcher.request(method, params, timeout=timeout, progress=progress)
        raise AssertionError("unreachable: tenacity re-raises the last error")

    def _envelope(self, params: dict[str, Any], version: str | None) -> dict[str, Any]:
        meta = {META_PROTOCOL_VERSION: version, META_CLIENT_CAPABILITIES: self.capabilities,
                META_CLIENT_INFO: {"name": self.client_info.name, "version": self.client_info.version},
                **(params.get("_meta") or {})}
        return {**params, "_meta": meta}

    # --- typed requests ----------------------------------------------------------------------------

    async def ping(self, *, timeout: float | None = None) -> None:
        # 2026-07-28 has no ping: discover is its liveness probe.
        await self.request("server/discover" if self.stateless else "ping", timeout=timeout)

    async def list_tools(self, cursor: str | None = None) -> models.ListToolsResult:
        return _typed(await self.request("tools/list", _cursor(cursor)), models.ListToolsResult)

    async def all_tools(self, *, invalid: InvalidItem | None = None) -> list[models.Tool]:
        return await self._all("tools/list", models.ListToolsResult, "tools", models.Tool, invalid)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None,
                        progress: ProgressCallback | None = None) -> models.CallToolResult:
        """The tool's result; a tool that failed is a result with `is_error=True`, not an exception."""
        result = await self.request("tools/call", {"name": name, "arguments": arguments or {}}, timeout=timeout,
                                    progress=progress)
        return _typed(result, models.CallToolResult)

    async def list_resources(self, cursor: str | None = None) -> models.ListResourcesResult:
        return _typed(await self.request("resources/list", _cursor(cursor)), models.ListResourcesResult)

    async def all_resources(self, *, invalid: InvalidItem | None = None) -> list[models.Resource]:
        return await self._all("resources/list", models.ListResourcesResult, "resources", models.Resource, invalid)

    async def all_resource_templates(self, *, invalid: InvalidItem | None = None) -> list[models.ResourceTemplate]:
        return await self._all("resources/templates/list", models.ListResourceTemplatesResult, "resource_templates",
                               models.ResourceTemplate, invalid)

    async def read_resource(self, uri: str) -> models.ReadResourceResult:
        return _typed(await self.request("resources/read", {"uri": uri}), models.ReadResourceResult)

    async def list_prompts(self, cursor: str | None = None) -> models.ListPromptsResult:
        return _typed(await self.request("prompts/list", _cursor(cursor)), models.ListPromptsResult)

    async def all_prompts(self, *, invalid: InvalidItem | None = None) -> list[models.Prompt]:
        return await self._all("prompts/list", models.ListPromptsResult, "prompts", models.Prompt, invalid)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> models.GetPromptResult:
        return _typed(await self.request("prompts/get", {"name": name, "arguments": arguments or {}}),
                      models.GetPromptResult)

    async def complete(self, ref: dict[str, Any], argument: str, value: str,
                       context: dict[str, str] | None = None) -> models.CompleteResult:
        """Suggestions for `argument` of a prompt (`{"type": "ref/prompt", "name": ...}`) or a resource
        template (`{"type": "ref/resource", "uri": TEMPLATE}`), given what is typed so far."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        return _typed(await self.request("completion/complete", params), models.CompleteResult)

    async def _all(self, method: str, kind: type, field: str, item: type, invalid: InvalidItem | None) -> list[Any]:
        """Every item of a paginated list, following `nextCursor`. Without `invalid`, one item that breaks
        the schema refuses the list; with it, such an item is handed to `invalid` and the rest are kept.
        A page that is malformed as a whole (not an object, its list not a list, a bad cursor) is refused
        either way, and skipped items count against MAX_ITEMS as the kept ones do."""
        items: list[Any] = []
        cursor: str | None = None
        taken = 0
        for _ in range(MAX_PAGES):
            result = await self.request(method, _cursor(cursor))
            if invalid is None:
                page = _typed(result, kind)
                items.extend(getattr(page, field))
                taken = len(items)
            else:
                page, sent = _typed_page(result, kind, field)
                taken += len(sent)
                if taken <= MAX_ITEMS:
                    items.extend(_valid_items(sent, item, invalid))
            if taken > MAX_ITEMS:
                raise ClientError(ClientErrorCode.INCOMPATIBLE, f"{method} gave more than {MAX_ITEMS} items")
            cursor = page.next_cursor
            if not cursor:
                return items
        raise ClientError(ClientErrorCode.INCOMPATIBLE, f"{method} gave more than {MAX_PAGES} pages")


def _cursor(cursor: str | None) -> dict[str, Any]:
    return {"cursor": cursor} if cursor else {}


def _typed_page(result: dict[str, Any], kind: type, field: str) -> tuple[Any, list[Any]]:
    """A list page checked as a whole (its items emptied out) and its items as sent, unchecked."""
    sent = result.get(wire_name(field))
    if sent is None:
        return _typed(result, kind), []  # refused there: the list is required
    if not isinstance(sent, list):
        raise ClientError(ClientErrorCode.INCOMPATIBLE,
                          f"the server's {kind.__name__} does not match the protocol: {wire_name(field)} is not a list")
    return _typed({**result, wire_name(field): []}, kind), sent


def _valid_items(sent: list[Any], item_type: type, invalid: InvalidItem) -> list[Any]:
    """The items that match the schema; each other one goes to `invalid` with the reasons cattrs gives."""
    kept = []
    for item in sent:
        try:
            kept.append(from_wire(item, item_type))
        except Exception as error:  # cattrs' ClassValidationError and friends
            invalid(item, "; ".join(cattrs.transform_error(error)))
    return kept


def _typed(result: dict[str, Any], kind: type) -> Any:
    try:
        return from_wire(result, kind)
    except Exception as error:  # cattrs' ClassValidationError and friends: the server broke the schema
        raise ClientError(ClientErrorCode.INCOMPATIBLE,
                          f"the server's {kind.__name__} does not match the protocol: {error}") from None
