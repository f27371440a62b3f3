"""`hexmcp config check [FILE] [--command C ...] [--json]`: check a config file with the environment,
as the command would at start-up, and print the effective settings with their origin, secrets masked.

Exit 0 when every setting can work; else one stderr line naming the key and the reason, exit 2.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any, Callable, Mapping

import attrs

from ..config.layers import Layers, Settled, config_path
from hexmcp.tools.gateway.settings import gateway_config
from ..config.schema import ConfigError
from hexmcp.tools.gateway.outbound import GatewayConfigError
from hexmcp.core.suggestions import did_you_mean
from hexmcp.core.startup import ExitCode

MASK = "***"
# The name ends with the secret's word, as the audit trail's redaction reads field names: `auth_token` and
# `api_key` are masked, `auth_token_name`, `auth_token_file` (a path) and `max_tokens` are not.
SECRET_NAME = re.compile(r"(token|key|secret|password)$", re.IGNORECASE)
URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")  # user:password@ in a URL


def run_config_check(args: argparse.Namespace, build: Callable[[], argparse.ArgumentParser],
                     env: Mapping[str, str]) -> int:
    commands = args.commands or ["serve"]
    try:
        layers = Layers.load(build(), env, config_path(args, env))
        unknown = [command for command in commands if command not in layers.keys]
        if unknown:
            known = did_you_mean(unknown[0], layers.keys) or f" (known: {', '.join(layers.keys)})"
            raise ConfigError(f"--command {unknown[0]}", f"not a command{known}")
        settled = {command: layers.settle(command, {}) for command in commands}
        gateway = _gateway(layers, settled)
    except (ConfigError, GatewayConfigError) as error:
        key, reason = (error.key, error.reason)
        print(f"hexmcp config check: invalid configuration: {key}: {reason}", file=sys.stderr, flush=True)
        return ExitCode.USAGE
    report = {
        "file": layers.file.name if layers.file else None,
        "commands": {command: {dest: {"value": masked(dest, s.value), "source": s.origin.source,
                                      "where": s.origin.where} for dest, s in sorted(table.items())}
                     for command, table in settled.items()},
        "gateway": masked_tree(gateway),
        "upstreams": [masked_tree({"name": spec.name, "target": str(spec.target), "auth_token": spec.auth_token,
                                   "wait": spec.wait_s, "retry_initial": spec.retry_initial_s,
                                   "retry_max": spec.retry_max_s, "idle_timeout": spec.idle_timeout_s})
                      for spec in (layers.file.upstreams if layers.file else ())],
    }
    print(json.dumps(report, indent=2) if args.json else _text(report))
    return ExitCode.OK


def _gateway(layers: Layers, settled: Mapping[str, Mapping[str, Settled]]) -> dict[str, Any] | None:
    """The gateway as the first checked command that has one resolves it (flags < env < files), else None."""
    for command, table in settled.items():
        if "gateway_url" in table:
            args = layers.attach(argparse.Namespace(), command, table)
            config = gateway_config(args)
            plain = attrs.asdict(config)
            plain["url"] = config.url
            return plain
    return None


def masked(name: str, value: Any) -> Any:
    """`value` fit to print: the whole value if `name` says secret, else credentials in URLs; plain JSON types."""
    plain = _plain(value)
    if SECRET_NAME.search(name) and plain not in (None, "", [], {}) and not isinstance(plain, bool):
        return MASK  # a switch (`upstream_shared_token = true`) says whether there is a secret, not what it is
    if isinstance(plain, str):
        return URL_CREDENTIALS.sub(MASK + "@", plain)
    if isinstance(plain, list):
        return [masked("", item) for item in plain]
    return plain


def masked_tree(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: masked(key, item) if not isinstance(item, dict) else masked_tree(item) for key, item in value.items()}
    return masked("", value)


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    return str(value)  # a Target, an enum: as it is written


def _text(report: dict[str, Any]) -> str:
    lines = [f"# {report['file'] or 'no config file'}: valid; value  # source (flag > env > file > default)"]
    for command, table in report["commands"].items():
        lines.append(f"[{command}]")
        width = max((len(dest) for dest in table), default=0)
        for dest, setting in table.items():
            origin = setting["source"] + (f" {setting['where']}" if setting["where"] else "")
            lines.append(f"{dest.ljust(width)} = {json.dumps(setting['value'])}  # {origin}")
    if report["gateway"] is not None:
        lines.append("[gateway]  # resolved: flag > GATEWAY_* > --gateway-config > [gateway] > default")
        lines += [f"{key} = {json.dumps(value)}" for key, value in report["gateway"].items()]
    for upstream in report["upstreams"]:
        lines.append("[[upstream]]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in upstream.items()]
    return "\n".join(lines)
