"""The configuration keys of every command, derived from its argparse parser.

A key is an optional argument's `dest`; how a value is written follows the action (a switch, a count,
one value, a list), and every value goes through the action's own `type` and `choices`. So a flag
added to a parser tomorrow is a config-file key and a `HEXMCP_<DEST>` variable the day it lands, with
the flag's own validation, and no edit here. What this module must not hold: any knowledge of one
particular flag.
"""

from __future__ import annotations

import argparse
import enum
from typing import Any

import attrs

ENV_PREFIX = "HEXMCP_"
NOT_SETTINGS = frozenset({"help", "version", "config"})  # dests that are not settings of a command
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


class ConfigError(ValueError):
    """A configuration value that cannot work: `key` as the operator wrote it (`HEXMCP_PORT`,
    `serve.port in hexmcp.toml`), and the reason."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


class Kind(enum.Enum):
    SWITCH = "switch"  # store_true, store_false, store_const, --x/--no-x: true or false
    COUNT = "count"  # -v -v: a whole number
    VALUE = "value"  # one value
    LIST = "list"  # append, extend, nargs *, + or N: an array of values


@attrs.frozen
class ConfigKey:
    dest: str
    flag: str  # the longest option string, for messages
    kind: Kind
    action: argparse.Action = attrs.field(eq=False, repr=False)

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.dest.upper()

    @property
    def default(self) -> Any:
        return None if self.action.default is argparse.SUPPRESS else self.action.default

    def from_file(self, raw: Any, where: str) -> Any:
        """A value as tomllib read it, as the flag would have set it; ConfigError naming `where` if not."""
        if self.kind is Kind.SWITCH:
            if not isinstance(raw, bool):
                raise ConfigError(where, f"must be true or false, got {_toml_type(raw)}")
            return self._switched(raw)
        if self.kind is Kind.COUNT:
            if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
                raise ConfigError(where, f"must be a whole number at least 0, got {raw!r}")
            return raw
        if self.kind is Kind.VALUE:
            return self._one(raw, where)
        if not isinstance(raw, list):
            raise ConfigError(where, f"must be an array, got {_toml_type(raw)}")
        return self._many([self._one(item, where) for item in raw], where)

    def from_env(self, text: str) -> Any:
        """An environment variable's text as the flag would have set it; ConfigError naming the variable."""
        where = self.env
        if self.kind is Kind.SWITCH:
            word = text.strip().lower()
            if word not in TRUE_WORDS | FALSE_WORDS:
                raise ConfigError(where, f"must be one of {', '.join(sorted(TRUE_WORDS | FALSE_WORDS))}, got {text!r}")
            return self._switched(word in TRUE_WORDS)
        if self.kind is Kind.COUNT:
            if not text.strip().isdigit():
                raise ConfigError(where, f"must be a whole number at least 0, got {text!r}")
            return int(text)
        if self.kind is Kind.VALUE:
            return self._one(text, where)
        import shlex  # only for a list given in one variable

        try:
            words = shlex.split(text)  # a list in one variable: space-separated, quoted as in a shell
        except ValueError as error:
            raise ConfigError(where, f"is not a space-separated list ({error})") from None
        return self._many([self._one(word, where) for word in words], where)

    def _switched(self, on: bool) -> Any:
        if isinstance(self.action, argparse.BooleanOptionalAction):
            return on
        return self.action.const if on else self.default

    def _one(self, raw: Any, where: str) -> Any:
        """One value through the action's type and choices, as argparse would run a flag's text."""
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            raise ConfigError(where, f"must be a string or a number, got {_toml_type(raw)}")
        text = raw if isinstance(raw, str) else repr(raw)
        convert = self.action.type
        if convert is None:
            value: Any = text
        else:
            try:
                value = convert(text)
            except argparse.ArgumentTypeError as error:
                raise ConfigError(where, str(error)) from None
            except (TypeError, ValueError):
                name = getattr(convert, "__name__", repr(convert))
                raise ConfigError(where, f"invalid {name} value: {text!r}") from None
        choices = self.action.choices
        if choices is not None and value not in choices:
            raise ConfigError(where, f"must be one of {', '.join(map(str, choices))}, got {raw!r}")
        return value

    def _many(self, values: list[Any], where: str) -> list[Any]:
        nargs = self.action.nargs
        if nargs == "+" and not values:
            raise ConfigError(where, "must hold at least one value")
        if isinstance(nargs, int) and len(values) != nargs:
            raise ConfigError(where, f"must hold exactly {nargs} values, got {len(values)}")
        return values


def command_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser of each command under `parser` (`serve`, `stdio`, `call`, ...), but `config` itself."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update({name: sub for name, sub in action.choices.items() if name != "config"})
    return found


def keys_of(parser: argparse.ArgumentParser) -> dict[str, ConfigKey]:
    """Every optional argument of one command's parser as a key, by dest (positionals are not settings)."""
    keys: dict[str, ConfigKey] = {}
    for action in parser._actions:
        if not action.option_strings or action.dest in NOT_SETTINGS or action.dest == argparse.SUPPRESS:
            continue
        keys[action.dest] = ConfigKey(action.dest, max(action.option_strings, key=len), _kind(action), action)
    return keys


def _kind(action: argparse.Action) -> Kind:
    if isinstance(action, argparse._CountAction):
        return Kind.COUNT
    if action.nargs == 0:
        return Kind.SWITCH
    if isinstance(action, (argparse._AppendAction, argparse._ExtendAction)) or action.nargs in ("*", "+") \
            or isinstance(action.nargs, int):
        return Kind.LIST
    return Kind.VALUE


def _toml_type(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array",
             dict: "a table"}
    return names.get(type(value), f"a {type(value).__name__}")
