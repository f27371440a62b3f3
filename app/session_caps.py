"""`--max-subscriptions` and `--max-uri-chars`, on `serve` and `stdio`: what one session may ask to be told
about (core/subscription_limits.py), set on the served server's ServerOptions by the composition root."""

from __future__ import annotations

import argparse

import attrs

from hexmcp.core import McpServer, ServerOptions
from hexmcp.tools.flag_types import positive_int

DEFAULTS = ServerOptions()


def add_session_cap_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-subscriptions", type=positive_int, default=DEFAULTS.max_subscriptions, metavar="N",
                        help="resource URIs one session may subscribe to, and one subscriptions/listen may name; "
                             f"beyond it the request is refused (default {DEFAULTS.max_subscriptions})")
    parser.add_argument("--max-uri-chars", type=positive_int, default=DEFAULTS.max_uri_chars, metavar="N",
                        help=f"longest resource URI a subscription may name (default {DEFAULTS.max_uri_chars})")


def apply_session_caps(server: McpServer, args: argparse.Namespace) -> None:
    """Set the caps the settings give on `server` (hexmcp's own, or a `hexmcp.Server`'s): its sessions read
    `server.options` on every subscribe, so this holds for every session opened after."""
    # getattr: tests and tools build settings by hand, without every flag.
    server.options = attrs.evolve(server.options,
                                  max_subscriptions=getattr(args, "max_subscriptions", server.options.max_subscriptions),
                                  max_uri_chars=getattr(args, "max_uri_chars", server.options.max_uri_chars))
