"""The gateway pack's flags, its configuration (flag > environment > --gateway-config file > default)
and its client."""

from __future__ import annotations

import argparse
import os
from typing import Any

from typing import TYPE_CHECKING

from .providers import PROVIDER_TYPES

if TYPE_CHECKING:
    from .outbound import GatewayConfig


def add_gateway_flags(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--gateway-config", metavar="PATH",
                       help="YAML or TOML file (gateway.*, providers.*, log_level); default: $GATEWAY_CONFIG. Kept for "
                            "compatibility: the [gateway] table of --config holds the same settings")
    group.add_argument("--gateway-url", metavar="URL",
                       help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 (default: $GATEWAY_URL; "
                            "none: the gateway tools answer -32005). The API key comes only from $GATEWAY_API_KEY "
                            "or the file, never a flag (flags show in ps)")
    group.add_argument("--provider-type", choices=PROVIDER_TYPES, help="default: $PROVIDER_TYPE, else openai")
    group.add_argument("--default-model", metavar="MODEL",
                       help="model for categories whose routing names none (default: $DEFAULT_MODEL)")
    group.add_argument("--gateway-timeout", metavar="SECONDS", help="per-attempt timeout (default: $TIMEOUT, else 60)")
    group.add_argument("--max-retries", metavar="N", help="retries after the first attempt (default: $MAX_RETRIES, else 3)")
    group.add_argument("--gateway-max-tokens", metavar="N",
                       help="the most completion tokens one routeCompletion may ask for, and the bound sent when it "
                            "names none (default: $GATEWAY_MAX_TOKENS, else 8192)")


GATEWAY_FLAGS = ("gateway_url", "provider_type", "default_model", "gateway_timeout", "max_retries", "gateway_max_tokens")


def gateway_config(args: argparse.Namespace) -> GatewayConfig:
    """Resolve the gateway's configuration; raises GatewayConfigError (exit 2) on a bad value.

    A flag's value that came from the config file (the config layer records each value's origin) ranks
    as that file, below GATEWAY_URL and the other variables, as every file value does."""
    origins = getattr(args, "config_origins", {})
    given = {name: getattr(args, name, None) for name in GATEWAY_FLAGS}
    from_file = {name: value for name, value in given.items() if getattr(origins.get(name), "source", "") == "file"}
    flags = {name: value for name, value in given.items() if name not in from_file}
    from .outbound import load_gateway_config

    return load_gateway_config(flags, os.environ, getattr(args, "gateway_config", None),
                               table=getattr(args, "gateway_table", None),
                               table_file=getattr(args, "config_name", None) or "the config file", table_flags=from_file)


def build_gateway(config: GatewayConfig) -> Any:
    """The OpenAI-compatible client for a configured gateway, else None (the tools then answer -32005)."""
    if not config.configured:
        return None
    from hexmcp.tools.gateway.outbound.openai_compatible import OpenAICompatibleGateway

    return OpenAICompatibleGateway(config)


def apply_gateway_log_level(config: GatewayConfig, log_level: str) -> GatewayConfig:
    """LOG_LEVEL (or the file's log_level) sets the log level unless --log-level or HEXMCP_LOG_LEVEL did."""
    import sys

    explicit = "HEXMCP_LOG_LEVEL" in os.environ or any(a.startswith("--log-level") for a in sys.argv[1:])
    if config.log_level and not explicit and config.log_level != log_level:
        from hexmcp.core.log import configure_logging

        configure_logging(config.log_level)
    return config
