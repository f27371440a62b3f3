"""Which upstream MCP servers to mount: `--upstream NAME=TARGET` (the flag's type) and the config file's
`[[upstream]]` tables, checked, and the list the pack mounts. The config file (app/config/file.py) checks
its tables here, so `hexmcp config check` finds what start-up would.

A table says what a flag cannot: a token per upstream (or the variable holding it), how long a call
waits for a reconnecting upstream, the reconnect backoff, and how long a call may go without a word
from the upstream (`idle_timeout`, 0 for no limit; `--upstream-idle-timeout` sets it for every upstream
whose table does not). An `--upstream` (flag, `HEXMCP_UPSTREAM` or the file's `upstream = [...]`) of the
same name replaces the table of that name.

Each upstream's bearer token is its own, first found of: the table's `auth_token` or `auth_token_env`,
the variable named after it (`HEXMCP_UPSTREAM_TOKEN_KB` for `kb`: `token_env_for`), and the shared
`HEXMCP_UPSTREAM_TOKEN` only where asked for (a table's `shared_token = true`, or
`--upstream-shared-token` for every upstream without one of its own). A token given for one server is
never sent to another one silently: the shared variable set but asked for by no upstream is a warning.
"""

from __future__ import annotations

import argparse
import os
import re
from typing import Any, Callable, Mapping

import attrs
import structlog

from hexmcp.core.suggestions import did_you_mean

log = structlog.get_logger("hexmcp.tools.upstreams")

TOKEN_ENV = "HEXMCP_UPSTREAM_TOKEN"  # the shared token: sent only to upstreams that ask for it
TABLE_KEYS = ("name", "target", "auth_token", "auth_token_env", "shared_token", "wait", "retry_initial", "retry_max",
              "max_message_bytes", "idle_timeout")
MAX_MESSAGE_BYTES = 16 * 1024 * 1024  # hexmcp.client's default; not imported: the config check runs without it
IDLE_TIMEOUT_S = 120.0  # mount.IDLE_TIMEOUT_S, for the same reason (a test holds them equal)


def token_env_for(name: str) -> str:
    """The variable holding upstream `name`'s own token: `HEXMCP_UPSTREAM_TOKEN_` + the name in capitals,
    `-` as `_` (names that differ only there share it, which `upstream_specs` refuses)."""
    return f"{TOKEN_ENV}_{re.sub(r'[^A-Za-z0-9]', '_', name).upper()}"


class UpstreamSpecError(ValueError):
    """An `[[upstream]]` table that cannot work: `key` as written (`upstream[2].wait`), and the reason."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


def upstream_spec(text: str) -> Any:
    """The `--upstream` flag's type: NAME=TARGET as a name and a `hexmcp.client.Target`."""
    from hexmcp.client import ClientError

    from .mount import parse_upstream

    try:
        return parse_upstream(text)
    except ClientError as error:
        raise argparse.ArgumentTypeError(error.message) from None


@attrs.frozen(kw_only=True)
class UpstreamSpec:
    """One `[[upstream]]` table, checked."""

    name: str
    target: Any  # hexmcp.client.Target
    auth_token: str | None = attrs.field(default=None, repr=False)
    wait_s: float = 5.0
    retry_initial_s: float = 0.2
    retry_max_s: float = 10.0
    max_message_bytes: int = MAX_MESSAGE_BYTES
    """The largest message read from this upstream (a JSON body, an SSE event, a frame, a stdout line)."""
    idle_timeout_s: float = IDLE_TIMEOUT_S
    """A forwarded call with neither an answer nor progress from the upstream for this long ends (0: never)."""
    idle_timeout_own: bool = False
    """The table sets `idle_timeout` itself: `--upstream-idle-timeout` leaves it alone."""

    @classmethod
    def from_table(cls, table: Any, where: str, env: Mapping[str, str], parse: Callable[[str], Any]) -> UpstreamSpec:
        """UpstreamSpecError naming `where` (e.g. `upstream[2]`) and the key, if it cannot work.
        `parse` is the `--upstream` flag's own type (NAME=TARGET to a name and a Target), so a table's
        name and target are checked exactly as the flag's are."""
        if not isinstance(table, dict):
            raise UpstreamSpecError(where, "must be a table (name, target, ...)")
        for key in table:
            if key not in TABLE_KEYS:
                hint = did_you_mean(key, TABLE_KEYS, prefix=f"{where}.") or f" (known: {', '.join(TABLE_KEYS)})"
                raise UpstreamSpecError(f"{where}.{key}", "unknown key" + hint)
        for required in ("name", "target"):
            if not isinstance(table.get(required), str):
                raise UpstreamSpecError(f"{where}.{required}", "is required, as a string")
        try:
            name, target = parse(f"{table['name']}={table['target']}")
        except argparse.ArgumentTypeError as error:
            raise UpstreamSpecError(where, str(error)) from None
        if "max_message_bytes" in table:
            size = table["max_message_bytes"]
            if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
                raise UpstreamSpecError(f"{where}.max_message_bytes", f"must be a positive whole number, got {size!r}")
        idle = table.get("idle_timeout", IDLE_TIMEOUT_S)
        if idle != 0 or isinstance(idle, bool):  # 0 is "no limit"; anything else is a number of seconds
            try:
                idle = _seconds(idle, f"{where}.idle_timeout")
            except UpstreamSpecError as error:  # worded as --upstream-idle-timeout words it
                raise UpstreamSpecError(error.key, f"must be 0 (no limit) or a positive number of seconds, "
                                                   f"got {idle!r}") from None
        return cls(name=name, target=target, auth_token=_token(table, where, env),
                   max_message_bytes=table.get("max_message_bytes", MAX_MESSAGE_BYTES), idle_timeout_s=float(idle),
                   idle_timeout_own="idle_timeout" in table,
                   **{f"{key}_s": _seconds(table[key], f"{where}.{key}") for key in ("wait", "retry_initial",
                                                                                     "retry_max") if key in table})


def _token(table: dict[str, Any], where: str, env: Mapping[str, str]) -> str | None:
    """The table's own token, if it names one; None leaves it to `upstream_specs` (the per-name variable)."""
    given = [key for key in ("auth_token", "auth_token_env", "shared_token") if key in table]
    if len(given) > 1:
        raise UpstreamSpecError(where, f"give one of auth_token, auth_token_env and shared_token, not {' and '.join(given)}")
    if "shared_token" in table:
        if not isinstance(table["shared_token"], bool):
            raise UpstreamSpecError(f"{where}.shared_token", "must be true or false")
        if not table["shared_token"]:
            return None
        if not env.get(TOKEN_ENV):
            raise UpstreamSpecError(f"{where}.shared_token", f"asks for ${TOKEN_ENV}, which is not set")
        return env[TOKEN_ENV]
    if "auth_token_env" in table:
        variable = table["auth_token_env"]
        if not isinstance(variable, str) or not env.get(variable):
            raise UpstreamSpecError(f"{where}.auth_token_env", f"names {variable!r}, which is not set")
        return env[variable]
    token = table.get("auth_token")
    if token is not None and (not isinstance(token, str) or not token):
        raise UpstreamSpecError(f"{where}.auth_token", "must be a non-empty string")
    return token


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise UpstreamSpecError(where, f"must be a positive number of seconds, got {value!r}")
    return float(value)


def upstream_specs(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> list[UpstreamSpec]:
    """Every upstream to mount: the `[[upstream]]` tables, each replaced by an `--upstream` of its name,
    each with its own token (see the module's note); UpstreamSpecError if two names share a variable."""
    env = os.environ if env is None else env
    given = [UpstreamSpec(name=name, target=target) for name, target in getattr(args, "upstream", [])]
    named = {spec.name for spec in given}
    specs = [spec for spec in getattr(args, "upstream_tables", ()) if spec.name not in named] + given
    variables: dict[str, str] = {}
    for spec in specs:
        variable = token_env_for(spec.name)
        if variable in variables:
            raise UpstreamSpecError(f"upstream {spec.name!r}", f"shares its token variable {variable} with "
                                                              f"{variables[variable]!r}: rename one of them")
        variables[variable] = spec.name
    shared = env.get(TOKEN_ENV) or None
    for_all = bool(getattr(args, "upstream_shared_token", False))
    if for_all and shared is None:
        raise UpstreamSpecError("--upstream-shared-token", f"asks for ${TOKEN_ENV}, which is not set")
    idle = getattr(args, "upstream_idle_timeout", None)  # for every upstream without a table's own value
    resolved = [attrs.evolve(spec, auth_token=spec.auth_token or env.get(token_env_for(spec.name))
                             or (shared if for_all else None),
                             idle_timeout_s=spec.idle_timeout_s if idle is None or spec.idle_timeout_own else idle)
                for spec in specs]
    if shared is not None and not any(spec.auth_token == shared for spec in resolved):
        log.warning(f"${TOKEN_ENV} is set but sent to no upstream: a token goes only to the upstream it is for",
                    fix=f"name it per upstream ({', '.join(token_env_for(s.name) for s in specs) or 'none configured'}), "
                        "or send it to every upstream without its own with --upstream-shared-token "
                        "(or to one with shared_token = true in its [[upstream]] table)")
    return resolved
