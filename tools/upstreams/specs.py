"""Which upstream MCP servers to mount: `--upstream NAME=TARGET` (the flag's type) and the config file's
`[[upstream]]` tables, checked, and the list the pack mounts. The config file (app/config/file.py) checks
its tables here, so `hexmcp config check` finds what start-up would.

A table says what a flag cannot: a token per upstream (or the variable holding it), how long a call
waits for a reconnecting upstream, and the reconnect backoff. An `--upstream` (flag, `HEXMCP_UPSTREAM`
or the file's `upstream = [...]`) of the same name replaces the table of that name.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, Callable, Mapping

import attrs

from hexmcp.core.suggestions import did_you_mean

TOKEN_ENV = "HEXMCP_UPSTREAM_TOKEN"  # the bearer token of every upstream that names none of its own
TABLE_KEYS = ("name", "target", "auth_token", "auth_token_env", "wait", "retry_initial", "retry_max")


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
        return cls(name=name, target=target, auth_token=_token(table, where, env),
                   **{f"{key}_s": _seconds(table[key], f"{where}.{key}") for key in ("wait", "retry_initial",
                                                                                     "retry_max") if key in table})


def _token(table: dict[str, Any], where: str, env: Mapping[str, str]) -> str | None:
    if "auth_token" in table and "auth_token_env" in table:
        raise UpstreamSpecError(where, "give auth_token or auth_token_env, not both")
    if "auth_token_env" in table:
        variable = table["auth_token_env"]
        if not isinstance(variable, str) or not env.get(variable):
            raise UpstreamSpecError(f"{where}.auth_token_env", f"names {variable!r}, which is not set")
        return env[variable]
    token = table.get("auth_token", env.get(TOKEN_ENV) or None)
    if token is not None and (not isinstance(token, str) or not token):
        raise UpstreamSpecError(f"{where}.auth_token", "must be a non-empty string")
    return token


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise UpstreamSpecError(where, f"must be a positive number of seconds, got {value!r}")
    return float(value)


def upstream_specs(args: argparse.Namespace) -> list[UpstreamSpec]:
    """Every upstream to mount: the `[[upstream]]` tables, each replaced by an `--upstream` of its name."""
    token = os.environ.get(TOKEN_ENV) or None
    given = [UpstreamSpec(name=name, target=target, auth_token=token) for name, target in getattr(args, "upstream", [])]
    named = {spec.name for spec in given}
    return [spec for spec in getattr(args, "upstream_tables", ()) if spec.name not in named] + given
