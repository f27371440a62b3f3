"""The one TOML config file (`--config FILE`, `$HEXMCP_CONFIG`), read with tomllib and checked whole.

    log_level = "warning"        # top level: a setting of every command that has the flag
    [serve]                      # a command's table: its own flags, over the top level
    port = 8091
    docs = ["handbook/"]
    [gateway]                    # the LLM gateway's settings (the --gateway-config schema)
    url = "http://127.0.0.1:8000/v1"
    [[upstream]]                 # an MCP server mounted as tools (hexmcp serve, hexmcp stdio)
    name = "kb"
    target = "http://127.0.0.1:9000/mcp"

Every key is checked against every command, whichever command runs, so a misspelt `[call]` key stops
`hexmcp serve` too, and `hexmcp config check` finds what any command would. The keys come from the
parsers (schema.py); this module knows only the layout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

import attrs

from hexmcp.core.suggestions import did_you_mean
from hexmcp.tools.upstreams.specs import UpstreamSpec, UpstreamSpecError

from .schema import ConfigError, ConfigKey

GATEWAY_TABLE = "gateway"
UPSTREAM_TABLES = "upstream"


@attrs.frozen(kw_only=True)
class Located:
    """A value and where it was written (`serve.port in hexmcp.toml`), for messages and `config check`."""

    value: Any
    where: str


@attrs.frozen(kw_only=True)
class ConfigFile:
    name: str  # the file's name, as messages quote it
    settings: Mapping[str, Mapping[str, Located]]  # command -> dest -> checked value (its table over the top level)
    gateway: Mapping[str, Any]  # the [gateway] table as written; tools/gateway/outbound/config.py checks it
    upstreams: tuple[UpstreamSpec, ...]


def read_config_file(path: str | Path, keys: Mapping[str, Mapping[str, ConfigKey]], env: Mapping[str, str],
                     upstream_parse: Callable[[str], Any] | None) -> ConfigFile:
    """Read and check the file against `keys` (command -> dest -> key); ConfigError on the first problem.
    `upstream_parse` checks an `[[upstream]]` table's name and target (the --upstream flag's type)."""
    import tomllib  # only when a file is named: not on the start path of a command without one

    path = Path(path)
    name = path.name
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"--config {path}", f"cannot be read ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"--config {path}", "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"--config {path}", f"is not valid TOML ({error})") from None
    shared: dict[str, Any] = {}
    tables: dict[str, dict[str, Any]] = {}
    gateway: dict[str, Any] = {}
    upstreams: tuple[UpstreamSpec, ...] = ()
    everywhere = {dest for command_keys in keys.values() for dest in command_keys}
    for key, value in document.items():
        if key == GATEWAY_TABLE:
            gateway = _table(value, f"{key} in {name}")
        elif key == UPSTREAM_TABLES and _is_table_array(value):
            upstreams = _upstreams(value, name, env, upstream_parse)
        elif key in keys:
            tables[key] = _table(value, f"{key} in {name}")
            for dest in tables[key]:
                if dest not in keys[key]:
                    raise _unknown_in_table(key, dest, name, keys)
        elif key in everywhere:
            shared[key] = value
        else:  # in a table no command has, its first key is the one named (`server.port`: serve.port?)
            inner = next(iter(value), None) if isinstance(value, dict) else None
            raise _unknown_key(key if inner is None else f"{key}.{inner}", name, keys)
    settings = {command: _checked(command_keys, shared, tables.get(command, {}), command, name)
                for command, command_keys in keys.items()}
    return ConfigFile(name=name, settings=settings, gateway=gateway, upstreams=upstreams)


def _unknown_key(dotted: str, name: str, keys: Mapping[str, Mapping[str, ConfigKey]]) -> ConfigError:
    """A top-level key (or a table) no command has, with the closest key a file may hold."""
    valid = {GATEWAY_TABLE, UPSTREAM_TABLES, *keys}
    for command, command_keys in keys.items():
        valid.update(command_keys)
        valid.update(f"{command}.{dest}" for dest in command_keys)
    return ConfigError(f"{dotted} in {name}", "unknown key" + did_you_mean(dotted, valid))


def _unknown_in_table(command: str, dest: str, name: str,
                      keys: Mapping[str, Mapping[str, ConfigKey]]) -> ConfigError:
    """A key of `[command]` that command does not have: the commands that do, else its closest key."""
    owners = [other for other, other_keys in keys.items() if dest in other_keys]
    if owners:
        hint = f" (a setting of hexmcp {', '.join(owners)})"
    else:
        hint = did_you_mean(dest, keys[command], prefix=f"{command}.")
    return ConfigError(f"{command}.{dest} in {name}", f"unknown key for hexmcp {command}{hint}")


def _checked(keys: Mapping[str, ConfigKey], shared: Mapping[str, Any], table: Mapping[str, Any], command: str,
             name: str) -> dict[str, Located]:
    found: dict[str, Located] = {}
    for dest, raw in shared.items():
        if dest in keys:
            where = f"{dest} in {name}"
            found[dest] = Located(value=keys[dest].from_file(raw, where), where=where)
    for dest, raw in table.items():
        where = f"{command}.{dest} in {name}"
        found[dest] = Located(value=keys[dest].from_file(raw, where), where=where)
    return found


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(where, "must be a table")
    return value


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def _upstreams(tables: list[dict[str, Any]], name: str, env: Mapping[str, str],
               parse: Callable[[str], Any] | None) -> tuple[UpstreamSpec, ...]:
    if parse is None:
        raise ConfigError(f"upstream in {name}", "no command here mounts upstreams")
    specs: list[UpstreamSpec] = []
    for index, table in enumerate(tables, start=1):
        try:
            spec = UpstreamSpec.from_table(table, f"upstream[{index}]", env, parse)
        except UpstreamSpecError as error:
            raise ConfigError(f"{error.key} in {name}", error.reason) from None
        if spec.name in {seen.name for seen in specs}:
            raise ConfigError(f"upstream[{index}].name in {name}", f"a second upstream named {spec.name!r}")
        specs.append(spec)
    return tuple(specs)
