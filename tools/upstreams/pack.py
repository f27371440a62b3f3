"""The upstreams pack: other MCP servers' tools, resources and prompts served here as NAME__TOOL, one
`mount.Upstream` per `--upstream NAME=TARGET` or `[[upstream]]` table, each connected (and reconnected)
in the background. Composed only when an upstream is configured, so a server without one never loads
the client (aiohttp)."""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from hexmcp.core.pack import BackgroundTask, Pack, PackProblem, Setup
from hexmcp.tools.environment import CLIENT_MODULES


class UpstreamsPack(Pack):
    name = "upstreams"
    extra = "client"
    extra_modules = CLIENT_MODULES
    order = 50  # its tools are registered as each upstream connects, after every other pack's

    def __init__(self) -> None:
        self.upstreams: list[Any] = []  # mount.Upstream, one per spec

    def add_flags(self, flags: argparse._ArgumentGroup) -> None:
        from hexmcp.tools.flag_types import seconds_or_off

        from .specs import IDLE_TIMEOUT_S, TOKEN_ENV, upstream_spec

        flags.add_argument("--upstream", action="append", default=[], type=upstream_spec, metavar="NAME=TARGET",
                           help="serve another MCP server's tools as NAME__TOOL (repeatable; TARGET as for hexmcp "
                                f"call; bearer token from ${TOKEN_ENV}_NAME; more options: the config file's "
                                "[[upstream]])")
        flags.add_argument("--upstream-shared-token", action="store_true", default=False,
                           help=f"send ${TOKEN_ENV} to every upstream that has no token of its own (without it, "
                                "that variable goes to no upstream)")
        flags.add_argument("--upstream-idle-timeout", type=seconds_or_off, default=None, metavar="SECONDS",
                           help="end a forwarded call when its upstream sends nothing for it (no answer, no progress) "
                                f"for this long, and cancel it there (default {IDLE_TIMEOUT_S:g}; 0: no limit); for "
                                "every upstream whose [[upstream]] table sets no idle_timeout of its own")

    def enabled(self, settings: argparse.Namespace) -> bool:
        return self.requested(settings)

    def requested(self, settings: argparse.Namespace) -> bool:
        return bool(getattr(settings, "upstream", None) or getattr(settings, "upstream_tables", None))

    def register(self, setup: Setup) -> None:
        """Nothing is connected here: each upstream's tools appear once its background work has connected."""
        from .mount import Upstream
        from .specs import upstream_specs

        self.upstreams = [Upstream(setup.server, spec.name, spec.target, auth_token=spec.auth_token,
                                   wait_s=spec.wait_s, retry_initial_s=spec.retry_initial_s,
                                   retry_max_s=spec.retry_max_s, max_message_bytes=spec.max_message_bytes,
                                   idle_timeout_s=spec.idle_timeout_s)
                          for spec in upstream_specs(setup.settings)]

    def background(self) -> list[BackgroundTask]:
        """Each upstream's run: connect, serve its tools, reconnect when it goes, until the server stops."""
        return [upstream.run for upstream in self.upstreams]

    def explain(self, error: Exception) -> PackProblem | None:
        from .specs import UpstreamSpecError

        return PackProblem(str(error)) if isinstance(error, UpstreamSpecError) else None

    def health(self) -> Mapping[str, Any]:
        return {upstream.name: {"connected": upstream.available, "tools": len(upstream.mounted),
                                "skipped": len(upstream.skipped)}
                for upstream in self.upstreams}
