"""`--config FILE` on every command: each setting from the flag, else `HEXMCP_<DEST>`, else the file,
else the parser's default.

The command line is parsed as usual; then every setting it did not give is filled from the
environment or the file, through the flag's own type and choices (schema.py). Which setting
came from where is kept on the namespace (`config_origins`), for `hexmcp config check` and for the
gateway, which ranks its own variables between the two.

The design and its trade-offs: docs/adr/0911-one-config-file.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Mapping, NoReturn, Sequence

import attrs

from .file import ConfigFile, read_config_file
from .schema import ConfigError, ConfigKey, command_parsers, keys_of
from hexmcp.core.startup import ExitCode

CONFIG_ENV = "HEXMCP_CONFIG"
UPSTREAM_DEST = "upstream"  # the flag whose type also checks the file's [[upstream]] tables


@attrs.frozen
class Origin:
    """Where a setting's value came from: `flag`, `env`, `file` or `default`, and the exact place."""

    source: str
    where: str = ""


@attrs.frozen
class Settled:
    value: Any
    origin: Origin


@attrs.frozen(kw_only=True)
class Layers:
    """The sources below the command line, for every command: the environment and the checked file."""

    keys: Mapping[str, Mapping[str, ConfigKey]]  # command -> dest -> key
    env: Mapping[str, str]
    file: ConfigFile | None

    @classmethod
    def load(cls, parser: argparse.ArgumentParser, env: Mapping[str, str], path: str | None) -> Layers:
        keys = {name: keys_of(command) for name, command in command_parsers(parser).items()}
        upstream_parse = next((k[UPSTREAM_DEST].action.type for k in keys.values() if UPSTREAM_DEST in k), None)
        file = read_config_file(path, keys, env, upstream_parse) if path else None
        return cls(keys=keys, env=env, file=file)

    def settle(self, command: str, given: Mapping[str, Any]) -> dict[str, Settled]:
        """Every setting of `command`: `given` (what the command line said), else env, else file, else default.
        ConfigError on a bad environment value (only the command's own variables are read)."""
        located = self.file.settings.get(command, {}) if self.file else {}
        settled: dict[str, Settled] = {}
        for dest, key in self.keys[command].items():
            text = self.env.get(key.env, "")
            if dest in given:
                settled[dest] = Settled(given[dest], Origin("flag", key.flag))
            elif text.strip():  # an empty variable is an unset one, as a shell's `X= cmd` means
                settled[dest] = Settled(key.from_env(text), Origin("env", key.env))
            elif dest in located:
                settled[dest] = Settled(located[dest].value, Origin("file", located[dest].where))
            else:
                settled[dest] = Settled(key.default, Origin("default"))
        return settled

    def attach(self, args: argparse.Namespace, command: str, settled: Mapping[str, Settled]) -> argparse.Namespace:
        """Set each value on `args`, with what the gateway and the upstreams read besides."""
        for dest, setting in settled.items():
            setattr(args, dest, setting.value)
        args.config_origins = {dest: setting.origin for dest, setting in settled.items()}
        args.config_name = self.file.name if self.file else None
        args.gateway_table = dict(self.file.gateway) if self.file else {}
        has_upstreams = UPSTREAM_DEST in self.keys[command]
        args.upstream_tables = self.file.upstreams if self.file and has_upstreams else ()
        return args


def add_config_support(commands: Any) -> None:
    """`--config FILE` on every command of `commands` (the `hexmcp` subparsers), then `hexmcp config check`."""
    for parser in {id(p): p for p in commands.choices.values()}.values():
        parser.add_argument("--config", metavar="FILE", type=_config_file_name,
                            help=f"TOML config file (default: ${CONFIG_ENV}); flag > HEXMCP_<FLAG> > file > default")
    config = commands.add_parser("config", help="check a config file", description="check a config file")
    actions = config.add_subparsers(dest="config_command", required=True)
    check = actions.add_parser("check", help="validate FILE and print the effective settings (secrets masked)")
    check.add_argument("file", type=_config_file_name, nargs="?", metavar="FILE", help=f"the TOML file (default: ${CONFIG_ENV}; none: env only)")
    check.add_argument("--command", action="append", dest="commands", metavar="COMMAND",
                       help="the command whose settings to print (repeatable; default: serve)")
    check.add_argument("--json", action="store_true", help="print JSON (for scripts) instead of text")


def _config_file_name(text: str) -> str:
    """argparse type for --config: not empty. An empty one was read as no file at all, so `--config
    "$MISSPELT_VARIABLE"` served on defaults without a word; an empty $HEXMCP_CONFIG still means none."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a TOML file, got an empty string")
    return text


def parse_with_config(build: Callable[[], argparse.ArgumentParser], argv: Sequence[str] | None,
                      env: Mapping[str, str], build_all: Callable[[], argparse.ArgumentParser] | None = None,
                      ) -> tuple[argparse.ArgumentParser, argparse.Namespace, list[str]]:
    """Parse `argv` as `build()`'s parser does, then fill what it did not give from env and the file.
    `build_all`, when `build` makes only the named command's parser: every command's, built when a config
    file is named, since the file is checked whole. A bad file or variable prints one line on stderr and
    exits 2, before anything starts."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build()
    given = _given(parser, argv)
    path = getattr(given, "config", None) or env.get(CONFIG_ENV) or None
    if path and build_all is not None:
        parser = build_all()
        given = _given(parser, argv)
    command = given.command
    if command not in command_parsers(parser):  # `config check` reads the file itself
        args, extra = parser.parse_known_args(argv)
        return parser, args, extra
    try:
        layers = Layers.load(parser, env, path)
        settled = layers.settle(command, {d: v for d, v in vars(given).items() if d in layers.keys[command]})
    except ConfigError as error:
        fail(command, error)
    for dest, setting in settled.items():  # a required flag the file or env gives is not required on the line
        if setting.origin.source in ("env", "file"):
            layers.keys[command][dest].action.required = False
    args, extra = parser.parse_known_args(argv)
    return parser, layers.attach(args, command, settled), extra


def _given(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Only what the command line says: parsed with every optional argument's default suppressed and none
    required, then the parser put back as it was (one parser, built once: building one costs far more than a parse)."""
    saved = [(action, action.default, action.required) for command in command_parsers(parser).values()
             for action in command._actions if action.option_strings]
    for action, _, _ in saved:
        action.default, action.required = argparse.SUPPRESS, False
    try:
        return parser.parse_known_args(argv)[0]
    finally:
        for action, default, required in saved:
            action.default, action.required = default, required


def fail(command: str, error: ConfigError) -> NoReturn:
    print(f"hexmcp {command}: invalid configuration: {error.key}: {error.reason}", file=sys.stderr, flush=True)
    raise SystemExit(ExitCode.USAGE)


def config_path(args: argparse.Namespace, env: Mapping[str, str]) -> str | None:
    """`config check`'s FILE, else $HEXMCP_CONFIG, else None (the environment and defaults alone)."""
    return args.file or env.get(CONFIG_ENV) or None
