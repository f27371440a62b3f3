"""`hexmcp stdio|serve|index` build only their own command's parser (app/cli.py BUILT_ALONE, ADR 0013):
what they parse, what a config file and the environment give them, and how a usage error reads are exactly
what the whole `hexmcp` parser gives."""

from __future__ import annotations

import argparse
import os

import pytest
import tomli_w

from hexmcp.app import cli
from hexmcp.app.commands.client_args import take_trailing_words
from hexmcp.app.config.layers import CONFIG_ENV, parse_with_config
from hexmcp.app.config.schema import command_parsers


def whole_parser_answer(argv: list[str]) -> argparse.Namespace:
    """What `hexmcp ARGV` parsed to before BUILT_ALONE: every command's parser, built at once."""
    parser, args, extra = parse_with_config(cli.build_parser, argv, os.environ)
    return take_trailing_words(parser, args, extra)


@pytest.fixture(autouse=True)
def no_hexmcp_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in os.environ if name.startswith("HEXMCP_")]:
        monkeypatch.delenv(name)


@pytest.mark.parametrize("argv", [
    ["stdio"],
    ["stdio", "--no-classifier", "--log-level", "warning"],
    ["stdio", "--max-message-bytes", "1000", "--no-classifier"],
    ["serve", "--port", "9", "--stateless"],
    ["serve", "--allowed-origins", "https://a.example", "--max-connections", "7"],
    ["index", "docs"],
])
def test_a_command_built_alone_parses_as_the_whole_parser_does(argv: list[str], monkeypatch) -> None:
    assert argv[0] in cli.BUILT_ALONE
    assert cli.parse_args(argv) == whole_parser_answer(argv)
    monkeypatch.setenv("HEXMCP_LOG_LEVEL", "debug")  # the environment layer reads the command's own keys
    assert cli.parse_args(argv) == whole_parser_answer(argv)


def test_a_command_built_alone_has_the_flags_it_has_in_the_whole_parser() -> None:
    whole = command_parsers(cli.build_parser())
    for command in cli.BUILT_ALONE:
        alone = command_parsers(cli.build_parser(command))
        assert set(alone) == {command}
        assert ([action.option_strings for action in alone[command]._actions]
                == [action.option_strings for action in whole[command]._actions])
        assert alone[command].format_help() == whole[command].format_help()


def test_a_config_file_is_checked_against_every_command_also_when_one_is_built_alone(tmp_path, monkeypatch) -> None:
    """A [serve] table (and a key shared by every command) in the file of `hexmcp stdio --config FILE`."""
    config = tmp_path / "hexmcp.toml"
    config.write_text(tomli_w.dumps({"log_level": "error", "serve": {"port": 9999}}), encoding="utf-8")
    argv = ["stdio", "--config", str(config)]
    assert cli.parse_args(argv) == whole_parser_answer(argv)
    assert cli.parse_args(argv).log_level == "error"
    monkeypatch.setenv(CONFIG_ENV, str(config))
    assert cli.parse_args(["stdio"]) == whole_parser_answer(["stdio"])
    config.write_text(tomli_w.dumps({"serve": {"no_such_key": 1}}), encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        cli.parse_args(["stdio"])
    assert stopped.value.code == 2


@pytest.mark.parametrize("argv", [["stdio", "--bogus"], ["stdio", "extra"], ["serve", "--port", "x"],
                                  ["stdio", "--help"]])
def test_usage_errors_and_help_read_as_they_do_with_the_whole_parser(argv: list[str], capsys) -> None:
    outputs = []
    for parse in (cli.parse_args, whole_parser_answer):
        with pytest.raises(SystemExit) as stopped:
            parse(argv)
        outputs.append((stopped.value.code, capsys.readouterr()))
    assert outputs[0] == outputs[1]
