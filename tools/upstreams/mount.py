"""Upstream servers mounted as tools: hexmcp, as a client of another MCP server, serves its tools.

`Upstream(server, "kb", target)` connects to the target and registers each upstream tool on the
hexmcp server as `kb__<tool>` (`__` keeps the name inside both the MCP tool-name format and the
stricter `[A-Za-z0-9_-]` of OpenAI function names), with the upstream's schemas; its resources and
resource templates as `upstream://kb/<its URI>` (`mounted_uri`), and its prompts as `kb__<prompt>`.
Nothing an upstream offers can replace what is served here already: a local tool, prompt, resource or
template of the same name or URI (or another upstream's) stays, and the upstream's is refused with a
warning naming both. Its `run()` is a background task for the server's lifetime:

- a `list_changed` from the upstream re-lists that kind (tools, resources or prompts), and the
  registries' own change listeners tell every downstream client, once per kind per sync and only when
  the served list changed (a sync is one registry batch, core/list_changes.py); re-lists coalesce (`refresh.py`): one
  in flight per kind and at most one more owed, however fast the notifications come;
- a lost connection (the process exited, the socket closed, a call found it unreachable) marks the
  upstream unavailable and reconnects with exponential backoff (`retry_initial_s` doubling up to
  `retry_max_s`). A call that arrives meanwhile waits up to `wait_s` for the upstream to come back,
  so a restart loses no call that was not in flight on it; after that it gets a tool error naming
  the upstream. Calls in flight when the connection dropped get the same tool error.
- a downstream call's progress is relayed, and its cancellation is passed on (`notifications/cancelled`).
- argument completion for mounted prompts and templates is asked of the upstream, if it offers it.
- one tool, prompt, resource or template the mount cannot serve (it breaks the protocol's schema, its
  name is outside the MCP tool-name format once prefixed, its schema or URI template does not compile)
  is skipped with one warning naming the upstream, the item and why; the others are mounted.
- a forwarded call ends with a tool error when the upstream sends nothing for it (no answer, no
  progress) for `idle_timeout_s`, and `notifications/cancelled` goes upstream: an answer it sent that
  could not be read (past the parser's nesting limit, not JSON) must not leave the caller waiting.
  Progress resets the deadline, so a long tool that reports progress is never cut.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import attrs
import structlog
from jsonschema.exceptions import SchemaError

from hexmcp.client.errors import ClientError, ClientErrorCode
from hexmcp.client.mcp_client import InvalidItem, McpClient, RetryPolicy
from hexmcp.client.target import Target
from hexmcp.client.transports import MAX_MESSAGE_BYTES
from hexmcp.core import ErrorCode, McpServer, ProtocolError, ToolContext, ToolError, models
from hexmcp.core.argument_refusals import ARGUMENTS_PATH
from hexmcp.core.convert import from_wire
from hexmcp.core.ids import new_event_id
from hexmcp.core.meta import META_EVENT_ID
from hexmcp.wire import jsonrpc

from .refresh import CoalescingRefresh

log = structlog.get_logger("hexmcp.tools.upstreams.mount")

SEPARATOR = "__"
MOUNT_SCHEME = "upstream"  # upstream://NAME/<the upstream's own URI>
RECONNECT_POLL_S = 0.05
IDLE_TIMEOUT_S = 120.0  # a forwarded call with no answer and no progress for this long is ended; 0: never
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")  # the MCP tool-name format (2025-11-25), as mounted
QUOTED_NAME_CHARS = 80  # a skipped item's name in a warning: a hostile one may be megabytes long
_NAME = re.compile(r"^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$")  # no "__" inside: the separator must stay unique
_TEMPLATE_VARIABLE = re.compile(r"\{([A-Za-z0-9_]+)\}")  # the level-1 expressions core.resources matches


def parse_upstream(spec: str) -> tuple[str, Target]:
    """`NAME=TARGET` (a `--upstream` value) as a name and a target; ClientError(USAGE) if malformed."""
    name, equals, target = spec.partition("=")
    if not equals or not _NAME.match(name):
        raise ClientError(ClientErrorCode.USAGE, f"--upstream {spec!r}: expected NAME=TARGET with NAME of letters, "
                                                 "digits, '-' and single '_'")
    return name, Target.parse(target)


def mounted_uri(upstream: str, uri: str) -> str:
    """An upstream's resource URI or URI template as served here: `upstream://NAME/` then the URI as the
    upstream gave it (a valid URI: its scheme's `:` and `//` are allowed in a path). Reversed by cutting
    the prefix, so a read goes to the right upstream with the right URI; a template stays a template,
    its variables in the same places, and can match only URIs under the prefix, never a local one."""
    return f"{MOUNT_SCHEME}://{upstream}/{uri}"


class Upstream:
    def __init__(self, server: McpServer, name: str, target: Target, *, auth_token: str | None = None,
                 wait_s: float = 5.0, retry_initial_s: float = 0.2, retry_max_s: float = 10.0,
                 max_message_bytes: int = MAX_MESSAGE_BYTES, idle_timeout_s: float = IDLE_TIMEOUT_S) -> None:
        self.server = server
        self.name = name
        self.target = target
        self.auth_token = auth_token
        self.wait_s = wait_s
        self.retry_initial_s = retry_initial_s
        self.retry_max_s = retry_max_s
        self.max_message_bytes = max_message_bytes  # the largest answer read from it (a larger one: a tool error)
        self.idle_timeout_s = idle_timeout_s or None  # None (from 0): a forwarded call waits as long as it takes
        self.client: McpClient | None = None
        self.mounted: set[str] = set()  # downstream names of the tools registered for this upstream
        self.resources: set[str] = set()  # URIs of the upstream's resources served here
        self.templates: dict[str, models.ResourceTemplate] = {}  # by URI template, as mounted
        self.prompts: dict[str, models.Prompt] = {}  # by downstream name, as mounted
        self.skipped: dict[tuple[str, str], str] = {}  # (kind, name) -> why, as of each kind's last sync
        self.last_error: str | None = None
        self.refreshes: dict[str, CoalescingRefresh] = {}  # per list kind, for the connection in use
        self._ready = asyncio.Event()

    @property
    def available(self) -> bool:
        return self._ready.is_set()

    async def run(self) -> None:
        """Connect, mount, watch; reconnect with backoff whenever the connection is lost. Runs until cancelled."""
        delay = self.retry_initial_s
        try:
            while True:
                client = McpClient(self.target, auth_token=self.auth_token, timeout=None, retry=RetryPolicy(attempts=1),
                                   max_message_bytes=self.max_message_bytes)
                try:
                    await client.connect()
                    self._watch(client)
                    await self._sync(client)
                except ClientError as error:
                    self.last_error = error.message
                    log.warning("upstream unavailable", upstream=self.name, error=error.message, retry_in_s=delay)
                    self._stop_refreshes()
                    await client.close()
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, self.retry_max_s)
                    continue
                delay = self.retry_initial_s
                self.client, self.last_error = client, None
                self._ready.set()
                log.info("upstream mounted", upstream=self.name, tools=len(self.mounted))
                await client.lost.wait()
                self._ready.clear()
                self._stop_refreshes()
                log.warning("upstream lost; reconnecting", upstream=self.name)
                await client.close()
        finally:
            self._ready.clear()
            self._stop_refreshes()
            if self.client is not None:
                await self.client.close()

    def _watch(self, client: McpClient) -> None:
        """Re-list a kind when the upstream says it changed: one refresh per kind at a time, and one more
        owed at most (a synchronous handler: a notification costs no task of its own)."""
        syncs = {"tools": self._sync_tools, "resources": self._sync_resources, "prompts": self._sync_prompts}
        self.refreshes = {kind: CoalescingRefresh(lambda sync=sync, kind=kind: self._resync(client, kind, sync))
                          for kind, sync in syncs.items()}
        for kind, refresh in self.refreshes.items():
            client.on_notification(f"notifications/{kind}/list_changed",
                                   lambda method, params, refresh=refresh: refresh.request())

    def _stop_refreshes(self) -> None:
        for refresh in self.refreshes.values():
            refresh.cancel()

    async def _resync(self, client: McpClient, kind: str, sync: Any) -> None:
        if kind != "tools" and kind not in client.server_capabilities:
            return  # a kind it never offered: nothing was mounted, and listing it would be refused
        try:
            await sync(client)
        except ClientError as error:  # the connection went meanwhile: the run loop reconnects and re-lists
            log.warning("upstream lists not re-read", upstream=self.name, kind=kind, error=error.message)

    async def _sync(self, client: McpClient) -> None:
        """Mount what the upstream offers now: tools, fixed resources and prompts (each if it has them)."""
        capabilities = client.server_capabilities
        await self._sync_tools(client)
        if "resources" in capabilities:
            await self._sync_resources(client)
        if "prompts" in capabilities:
            await self._sync_prompts(client)

    async def _sync_resources(self, client: McpClient) -> None:
        """Resources and templates under `mounted_uri`; reads go upstream with the upstream's own URI. The
        core matches level-1 templates (`{name}`) only; others are listed but never match. A URI or a
        template already served by someone else is refused, never replaced."""
        registry = self.server.resources
        skipped: dict[tuple[str, str], str] = {}
        resources = {mounted_uri(self.name, resource.uri): resource
                     for resource in await client.all_resources(invalid=self._invalid("resource", "uri", skipped))}
        templates = {mounted_uri(self.name, template.uri_template): template for template in
                     await client.all_resource_templates(invalid=self._invalid("resource template", "uriTemplate",
                                                                               skipped))}
        taken = {resource.uri for resource in registry.definitions()} - self.resources
        taken_templates = {template.uri_template for template in registry.template_definitions()} - self.templates.keys()
        with registry.batch():  # one list_changed for the whole sync, none if nothing changed
            for stale in self.resources - resources.keys():
                registry.remove(stale)
            for stale in self.templates.keys() - templates.keys():
                registry.remove_template(stale)
            mounted: set[str] = set()
            for uri, resource in resources.items():
                if self._refused("resource", uri, taken):
                    continue
                registry.add(attrs.evolve(resource, uri=uri), self._reader(resource.uri))
                mounted.add(uri)
            kept: dict[str, models.ResourceTemplate] = {}
            for uri_template, template in templates.items():
                if self._refused("resource template", uri_template, taken_templates):
                    continue
                if self.templates.get(uri_template) != template:
                    registry.remove_template(uri_template)  # ours: it was not in taken_templates
                    try:
                        registry.add_template(attrs.evolve(template, uri_template=uri_template),
                                              self._template_reader(template.uri_template),
                                              self._completer(client, {"type": "ref/resource",
                                                                       "uri": template.uri_template}))
                    except re.error as error:  # e.g. `{id}` twice: no pattern can match it
                        skipped[("resource template", _quoted(template.uri_template))] = \
                            f"its URI template does not compile: {error}"
                        continue
                kept[uri_template] = template
        self.resources, self.templates = mounted, kept
        self._warn_skipped(("resource", "resource template"), skipped)

    def _refused(self, kind: str, name: str, taken: set[str]) -> bool:
        """True (and a warning) when `name` is already served here by a local pack or another upstream."""
        if name not in taken:
            return False
        log.warning(f"upstream {kind} refused: the name is already served here", upstream=self.name, name=name)
        return True

    async def _sync_prompts(self, client: McpClient) -> None:
        """Prompts as NAME__PROMPT, rendered upstream; one the upstream dropped is dropped here too."""
        skipped: dict[tuple[str, str], str] = {}
        prompts = {f"{self.name}{SEPARATOR}{prompt.name}": prompt
                   for prompt in await client.all_prompts(invalid=self._invalid("prompt", "name", skipped))}
        taken = {prompt.name for prompt in self.server.prompts.definitions()} - self.prompts.keys()
        prompts = {name: prompt for name, prompt in prompts.items() if not self._refused("prompt", name, taken)}
        with self.server.prompts.batch():  # one list_changed for the whole sync, none if nothing changed
            for stale in self.prompts.keys() - prompts.keys():
                self.server.prompts.remove(stale)
            for name, prompt in prompts.items():
                if self.prompts.get(name) != prompt:
                    self.server.prompts.add(models.Prompt(name=name, title=prompt.title, description=prompt.description,
                                                          arguments=prompt.arguments), self._renderer(prompt.name),
                                            self._completer(client, {"type": "ref/prompt", "name": prompt.name}))
        self.prompts = prompts
        self._warn_skipped(("prompt",), skipped)

    def _invalid(self, kind: str, key: str, skipped: dict[tuple[str, str], str]) -> InvalidItem:
        """Collects, into `skipped`, the items of a list the client found breaking the protocol's schema."""
        def note(item: Any, reason: str) -> None:
            name = item.get(key) if isinstance(item, dict) else None
            skipped[(kind, _quoted(name if isinstance(name, str) else repr(name if name is not None else item)))] = \
                f"it does not match the protocol's schema: {reason}"

        return note

    def _warn_skipped(self, kinds: tuple[str, ...], skipped: dict[tuple[str, str], str]) -> None:
        """One warning per skipped item: a re-list (list_changed, a reconnect) that skips it again for the
        same reason says nothing new, so it says nothing."""
        for (kind, name), reason in skipped.items():
            if self.skipped.get((kind, name)) != reason:
                log.warning(f"upstream {kind} skipped", upstream=self.name, name=name, reason=reason)
        self.skipped = {**{key: why for key, why in self.skipped.items() if key[0] not in kinds}, **skipped}

    def _completer(self, client: McpClient, ref: dict[str, Any]) -> Any:
        """Argument completion asked of the upstream, when it offers completion at all."""
        if "completions" not in client.server_capabilities:
            return None

        async def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:
            live = await self._connected(None)
            try:
                async with self._idle_deadline():
                    return (await live.complete(ref, argument, value, context)).completion.values
            except ClientError as error:
                raise _downstream_error(self.name, error) from None

        return complete

    def _template_reader(self, uri_template: str) -> Any:
        async def read(**variables: str) -> list[Any]:
            # The core matched the URI against the template; filling the template back in gives that URI.
            return await self._reader(_TEMPLATE_VARIABLE.sub(lambda match: variables[match[1]], uri_template))()

        return read

    def _reader(self, uri: str) -> Any:
        """Reads `uri` (the upstream's own) upstream; the contents answer under their mounted URIs."""
        async def read() -> list[Any]:
            client = await self._connected(None)
            try:
                async with self._idle_deadline():
                    contents = (await client.read_resource(uri)).contents
            except ClientError as error:
                raise _downstream_error(self.name, error) from None
            return [attrs.evolve(item, uri=mounted_uri(self.name, item.uri)) for item in contents]

        return read

    def _namespaced(self, block: Any) -> Any:
        """A content block with the upstream's resource URIs as served here: a link or an embedded
        resource from an upstream names its resource, never the local one of the same URI."""
        if isinstance(block, models.ResourceLink):
            return attrs.evolve(block, uri=mounted_uri(self.name, block.uri))
        if isinstance(block, models.EmbeddedResource):
            return attrs.evolve(block, resource=attrs.evolve(block.resource, uri=mounted_uri(self.name, block.resource.uri)))
        return block

    def _renderer(self, upstream_name: str) -> Any:
        async def render(**arguments: str) -> list[models.PromptMessage]:
            client = await self._connected(None)
            try:
                async with self._idle_deadline():
                    messages = (await client.get_prompt(upstream_name, arguments)).messages
            except ClientError as error:
                raise _downstream_error(self.name, error) from None
            return [attrs.evolve(message, content=self._namespaced(message.content)) for message in messages]

        return render

    async def _sync_tools(self, client: McpClient) -> None:
        """Register the upstream's tools under our names; drop the ones it no longer has."""
        skipped: dict[tuple[str, str], str] = {}
        tools = await client.all_tools(invalid=self._invalid("tool", "name", skipped))
        wanted = {f"{self.name}{SEPARATOR}{tool.name}": tool for tool in tools}
        for name, tool in list(wanted.items()):
            if not _TOOL_NAME.match(name):
                skipped[("tool", _quoted(tool.name))] = (f"'{_quoted(name)}' is not a tool name clients accept "
                                                         "(1 to 128 of A-Z a-z 0-9 _ - .)")
                del wanted[name]
        taken = {name for name in wanted if name in self.server.tools} - self.mounted
        wanted = {name: tool for name, tool in wanted.items() if not self._refused("tool", name, taken)}
        with self.server.tools.batch():  # one list_changed for the whole sync, none if nothing changed
            for stale in self.mounted - wanted.keys():
                self.server.tools.remove(stale)
            for name, tool in list(wanted.items()):
                definition = self._definition(name, tool)
                current = self.server.tools.get(name)
                if current is None or current.definition != models.Tool(name=name, **definition):
                    try:
                        self.server.tools.add(name, self._forward(tool.name), **definition)
                    except SchemaError as error:  # checked there, before anything is registered
                        skipped[("tool", _quoted(tool.name))] = f"its schema is not valid JSON Schema: {error.message}"
                        self.server.tools.remove(name)  # an earlier version of it, if there was one
                        del wanted[name]
        self.mounted = set(wanted)
        self._warn_skipped(("tool",), skipped)

    def _definition(self, name: str, tool: models.Tool) -> dict[str, Any]:
        return {"description": tool.description or f"{tool.name} on the upstream server '{self.name}'",
                "input_schema": tool.input_schema, "output_schema": tool.output_schema, "title": tool.title,
                "annotations": tool.annotations}

    def _forward(self, upstream_name: str) -> Any:
        async def forward(arguments: dict[str, Any], ctx: ToolContext) -> models.CallToolResult:
            return await self.call(upstream_name, arguments, ctx)

        return forward

    async def call(self, tool: str, arguments: dict[str, Any], ctx: ToolContext) -> models.CallToolResult:
        stale: McpClient | None = None
        while True:
            client = await self._connected(stale)
            try:
                async with self._idle_deadline() as deadline:
                    result = await client.request("tools/call", {"name": tool, "arguments": arguments},
                                                  progress=deadline.relay(ctx.report_progress))
            except ClientError as error:
                if error.code not in (ClientErrorCode.UNREACHABLE, ClientErrorCode.CLOSED):
                    raise _downstream_error(self.name, error) from None
                client.lost.set()  # HTTP has no connection to watch: a failed call is how loss shows
                self.last_error = error.message
                if error.delivered is False:
                    stale = client  # it never reached the upstream: send it again once reconnected
                    continue
                raise ToolError(self._unavailable()) from None  # in flight when the upstream went
            called = from_wire(result, models.CallToolResult)
            content = [self._namespaced(block) for block in called.content]
            if called.is_error:
                return self._tool_error(tool, called, content)
            return attrs.evolve(called, content=content)

    def _tool_error(self, tool: str, called: models.CallToolResult,
                    content: list[Any]) -> models.CallToolResult:
        """The upstream's tool error, logged here under the request's ids and the eventId the client gets: the
        upstream's own (a hexmcp upstream names one in `_meta`; its log is the upstream's stderr, not ours), or
        one minted here for an upstream that names none."""
        meta = dict(called.meta or {})
        event_id = meta.get(META_EVENT_ID)
        if not isinstance(event_id, str):
            event_id = meta[META_EVENT_ID] = new_event_id()
        log.info("upstream tool error", upstream=self.name, tool=tool, eventId=event_id)
        return attrs.evolve(called, content=content, meta=meta)

    def _idle_deadline(self) -> _IdleDeadline:
        return _IdleDeadline(self.name, self.idle_timeout_s)

    async def _connected(self, stale: McpClient | None) -> McpClient:
        """The live client (not `stale`, one a call just found dead), waiting up to `wait_s` for it.
        Polled: this runs only while an upstream is away, and then a few checks a second cost nothing."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait_s
        while not self._ready.is_set() or self.client is None or self.client is stale:
            if loop.time() >= deadline:
                raise ToolError(self._unavailable())
            await asyncio.sleep(RECONNECT_POLL_S)
        return self.client

    def _unavailable(self) -> str:
        reason = f" ({self.last_error})" if self.last_error else ""
        return f"the upstream server '{self.name}' is unavailable{reason}; reconnecting, try again shortly"


class _IdleDeadline:
    """Ends the request awaited inside (`async with`) with a ToolError once the upstream has sent nothing
    for it (no answer, no progress relayed through `relay`) for `seconds` (None: never). The request is
    cancelled the way a downstream cancellation cancels it: the dispatcher sends `notifications/cancelled`
    upstream. An `asyncio.timeout` scope, pushed back by each progress notification."""

    def __init__(self, upstream: str, seconds: float | None) -> None:
        self.upstream = upstream
        self.seconds = seconds
        self.scope = asyncio.timeout(seconds)

    async def __aenter__(self) -> _IdleDeadline:
        await self.scope.__aenter__()
        return self

    async def __aexit__(self, kind: Any, error: Any, traceback: Any) -> None:
        try:
            await self.scope.__aexit__(kind, error, traceback)
        except TimeoutError:  # raised here only when the scope expired (a TimeoutError from the work passes by)
            raise ToolError(f"the upstream server '{self.upstream}' sent nothing for this request (no answer, no "
                            f"progress) for {self.seconds:g} s, so it was cancelled there; an answer it sent may "
                            "have been unreadable (idle_timeout in its [[upstream]] table; 0: no limit)") from None

    def relay(self, progress: Any) -> Any:
        """`progress` (the downstream caller's report) wrapped so that each report resets the deadline."""
        if self.seconds is None:
            return progress
        loop = asyncio.get_running_loop()

        def reported(*update: Any) -> Any:
            self.scope.reschedule(loop.time() + self.seconds)
            return progress(*update)

        return reported


def _quoted(name: str) -> str:
    return name if len(name) <= QUOTED_NAME_CHARS else f"{name[:QUOTED_NAME_CHARS]}... ({len(name)} characters)"


def _downstream_error(upstream: str, error: ClientError) -> Exception:
    """An upstream's refusal as ours: refused arguments are refused arguments here too, answered as the
    client's version says (-32602, or from 2025-11-25 on an isError result the model can correct, whatever
    version the upstream speaks: `core/argument_refusals.py`); anything else is a tool error."""
    if error.code is ClientErrorCode.SERVER_ERROR and error.rpc_code == jsonrpc.INVALID_PARAMS:
        data: dict[str, Any] = {"path": ARGUMENTS_PATH, "upstream": upstream}
        if error.data is not None:
            data["upstreamData"] = error.data
        return ProtocolError(ErrorCode.INVALID_PARAMS, f"{upstream}: {error.message}", data)
    return ToolError(f"the upstream server '{upstream}' failed: {error.message}")
