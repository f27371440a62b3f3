"""Which OAuth scope each MCP method and tool needs.

Defaults: `mcp:read` for the methods that list and read (tools, resources, prompts, completions),
`mcp:tools` for `tools/call`; every other method (initialize, ping, notifications, tasks of one's own,
logging) needs a valid token and nothing more. The operator overrides any of it, method by method
(`tools/call=mcp:write`), tool by tool (`tool:routeCompletion=mcp:gateway`, which replaces the
`tools/call` rule for that tool) and may require no scope (`resources/read=`). A rule's value may name
several scopes, space-separated: all are needed.

A principal without a scope a request needs gets 403 with `error="insufficient_scope"` and the scopes
needed (`challenge.py`); the static `--auth-token` carries every scope.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

READ = "mcp:read"
TOOLS = "mcp:tools"
DEFAULT_RULES: dict[str, str] = {
    "tools/list": READ, "resources/list": READ, "resources/templates/list": READ, "resources/read": READ,
    "resources/subscribe": READ, "resources/unsubscribe": READ, "prompts/list": READ, "prompts/get": READ,
    "completion/complete": READ, "tools/call": TOOLS,
}
TOOL_PREFIX = "tool:"
NOTHING: frozenset[str] = frozenset()


class ScopePolicy:
    def __init__(self, rules: Mapping[str, str] | None = None) -> None:
        merged = {**DEFAULT_RULES, **(rules or {})}
        self._methods: dict[str, frozenset[str]] = {}
        self._tools: dict[str, frozenset[str]] = {}
        for key, value in merged.items():
            scopes = frozenset(value.split())
            if key.startswith(TOOL_PREFIX):
                self._tools[key[len(TOOL_PREFIX):]] = scopes
            else:
                self._methods[key] = scopes
        self.all_scopes: frozenset[str] = frozenset().union(*self._methods.values(), *self._tools.values())

    @staticmethod
    def parse(entries: Iterable[str]) -> dict[str, str]:
        """`METHOD=SCOPE` and `tool:NAME=SCOPE` entries (from the command line) as rules; ValueError if malformed."""
        rules: dict[str, str] = {}
        for entry in entries:
            key, sep, value = entry.partition("=")
            key = key.strip()
            if not sep or not key or key == TOOL_PREFIX:
                raise ValueError(f"a scope rule is METHOD=SCOPE or tool:NAME=SCOPE, got {entry!r}")
            rules[key] = value.strip()
        return rules

    def needed(self, method: str, tool: str | None = None) -> frozenset[str]:
        if method == "tools/call" and tool is not None:
            scopes = self._tools.get(tool)
            if scopes is not None:
                return scopes
        return self._methods.get(method, NOTHING)

    def needed_by_messages(self, value: Any) -> frozenset[str]:
        """The scopes a decoded JSON-RPC body (one message or a batch) needs, all its requests together."""
        needed = NOTHING
        for message in value if isinstance(value, list) else (value,):
            if isinstance(message, dict):
                method = message.get("method")
                if isinstance(method, str):
                    needed = needed | self.needed(method, _tool_name(message.get("params")))
        return needed


    def needed_by_rest(self, method: str, body: Any) -> frozenset[str]:
        """The scopes a REST dialect call needs: the method from the path, a `tools/call`'s tool from its
        body (`{"params": {"name"}}`, or the flat `{"name"}` form)."""
        tool = None
        if method == "tools/call" and isinstance(body, dict):
            tool = _tool_name(body.get("params")) or _tool_name(body)
        return self.needed(method, tool)


def _tool_name(params: Any) -> str | None:
    if isinstance(params, dict):
        name = params.get("name")
        if isinstance(name, str):
            return name
    return None
