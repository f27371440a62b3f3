"""The one config file, in process: keys derived from the parsers, flag > env > file > default, and every
bad key or value stopped with the key and the reason (ADR 0911).

The command line goes through the real `hexmcp` parser (`cli.build_parser`); files are real TOML files
written with tomli-w and read by the module under test with tomllib.
"""

from __future__ import annotations

import argparse
import shlex
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings, strategies as st

from hexmcp.app import cli
from hexmcp.app.config.layers import CONFIG_ENV, parse_with_config
from hexmcp.tools.gateway.settings import gateway_config
from hexmcp.app.config.schema import ENV_PREFIX, NOT_SETTINGS, command_parsers, keys_of
from hexmcp.tools.flag_types import positive_int
from hexmcp.tools.gateway.outbound import GatewayConfigError
from hexmcp.core.startup import ExitCode


def write(directory: Path, document: dict[str, Any], name: str = "hexmcp.toml") -> Path:
    path = directory / name
    path.write_text(tomli_w.dumps(document), encoding="utf-8")
    return path


def parse(argv: list[str], env: dict[str, str] | None = None,
          build: Callable[[], argparse.ArgumentParser] = cli.build_parser) -> argparse.Namespace:
    return parse_with_config(build, argv, env or {})[1]


def refusal(capsys: pytest.CaptureFixture[str], argv: list[str], env: dict[str, str] | None = None) -> str:
    """The one stderr line a bad configuration gives, after checking it exits 2."""
    with pytest.raises(SystemExit) as stopped:
        parse(argv, env)
    assert stopped.value.code == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err.strip()


# --- the keys are the parsers' ---------------------------------------------------------------------

def test_every_optional_flag_of_every_command_is_a_key() -> None:
    commands = command_parsers(cli.build_parser())
    assert {"serve", "stdio", "index", "call", "bench", "record"} <= set(commands)
    assert "config" not in commands
    for name, parser in commands.items():
        flags = {a.dest for a in parser._actions if a.option_strings and a.dest not in NOT_SETTINGS}
        keys = keys_of(parser)
        assert set(keys) == flags, name
        assert all(key.env == ENV_PREFIX + key.dest.upper() for key in keys.values())


def test_a_flag_added_tomorrow_is_a_key_with_its_own_validation(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    def build() -> argparse.ArgumentParser:
        parser = cli.build_parser()
        command_parsers(parser)["serve"].add_argument("--brand-new-limit", type=positive_int, default=9)
        return parser

    config = write(tmp_path, {"serve": {"brand_new_limit": 5}})
    assert parse(["serve", "--config", str(config)], build=build).brand_new_limit == 5
    assert parse(["serve"], {"HEXMCP_BRAND_NEW_LIMIT": "7"}, build=build).brand_new_limit == 7
    assert parse(["serve"], build=build).brand_new_limit == 9
    with pytest.raises(SystemExit):
        parse(["serve", "--config", str(write(tmp_path, {"brand_new_limit": 0}))], build=build)
    assert capsys.readouterr().err.strip() == ("hexmcp serve: invalid configuration: brand_new_limit in hexmcp.toml: "
                                               "must be a positive integer, got 0")


# --- precedence: flag > env > file > default, for every kind of key --------------------------------

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._/", min_size=1, max_size=12)
TOKEN = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp")),
                min_size=1, max_size=20).filter(lambda t: not t.startswith("-") and t.strip() == t)
SECONDS = st.floats(min_value=0.001, max_value=1e6, allow_nan=False)


class Sample:
    """One key of `hexmcp serve`: how a value is drawn, and how it is written as a flag, a variable, a file value."""

    def __init__(self, dest: str, values: st.SearchStrategy[Any], flag: Callable[[Any], list[str]],
                 env: Callable[[Any], str] = str, file: Callable[[Any], Any] = lambda v: v) -> None:
        self.dest, self.values, self.flag, self.env, self.file = dest, values, flag, env, file


SAMPLES = (
    Sample("port", st.integers(1, 65535), lambda v: ["--port", str(v)]),
    Sample("log_level", st.sampled_from(["debug", "info", "warning", "error"]), lambda v: ["--log-level", v]),
    Sample("head_timeout", SECONDS, lambda v: ["--head-timeout", repr(v)], env=repr),
    Sample("auth_token", TOKEN, lambda v: [f"--auth-token={v}"]),
    Sample("docs", st.lists(WORD, min_size=1, max_size=3), lambda v: [w for d in v for w in ("--docs", d)],
           env=shlex.join),
    Sample("stateless", st.just(True), lambda v: ["--stateless"], env=lambda v: "yes"),
)
SOURCES = ("flag", "env", "file")
DEFAULTS = parse(["serve"])  # the parsers' own defaults (no file, no variables)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_each_setting_comes_from_the_highest_source_that_gives_it(data: st.DataObject) -> None:
    argv, env, document, expected = ["serve"], {}, {}, {}
    for sample in SAMPLES:
        present = data.draw(st.sets(st.sampled_from(SOURCES)), label=sample.dest)
        drawn = {source: data.draw(sample.values, label=f"{sample.dest} {source}") for source in present}
        if "flag" in drawn:
            argv += sample.flag(drawn["flag"])
        if "env" in drawn:
            env[ENV_PREFIX + sample.dest.upper()] = sample.env(drawn["env"])
        if "file" in drawn:
            document.setdefault("serve" if data.draw(st.booleans()) else "", {})[sample.dest] = sample.file(drawn["file"])
        winner = next((source for source in SOURCES if source in drawn), "default")
        expected[sample.dest] = (winner, drawn.get(winner))
    shared = document.pop("", {})
    with tempfile.TemporaryDirectory() as directory:
        config = write(Path(directory), {**shared, **document})
        args = parse([*argv, "--config", str(config)] if data.draw(st.booleans()) else argv,
                     {**env, CONFIG_ENV: str(config)})
    defaults = DEFAULTS
    for dest, (source, value) in expected.items():
        assert args.config_origins[dest].source == source, dest
        assert getattr(args, dest) == (getattr(defaults, dest) if source == "default" else value), dest


def test_a_flag_replaces_a_list_from_the_file_and_the_table_wins_over_the_top_level(tmp_path: Path) -> None:
    config = write(tmp_path, {"docs": ["top"], "port": 1, "serve": {"docs": ["served"]}, "stdio": {}})
    assert parse(["serve", "--config", str(config)]).docs == ["served"]
    assert parse(["stdio", "--config", str(config)]).docs == ["top"]
    assert parse(["serve", "--config", str(config), "--docs", "flag"]).docs == ["flag"]
    assert parse(["serve", "--config", str(config)]).port == 1


def test_a_required_flag_can_come_from_the_file(tmp_path: Path) -> None:
    config = write(tmp_path, {"record": {"out": "calls.jsonl"}})
    assert parse(["record", "--config", str(config), "http://127.0.0.1:1/mcp"]).out == "calls.jsonl"


def test_an_empty_variable_is_unset_and_existing_variables_keep_working(tmp_path: Path) -> None:
    config = write(tmp_path, {"log_level": "error"})
    assert parse(["serve", "--config", str(config)], {"HEXMCP_LOG_LEVEL": ""}).log_level == "error"
    assert parse(["serve", "--config", str(config)], {"HEXMCP_LOG_LEVEL": "debug"}).log_level == "debug"
    assert parse(["call"], {"HEXMCP_AUTH_TOKEN": "t0k"}).auth_token == "t0k"


# --- refusals: one line naming the key and the reason, exit 2 ---------------------------------------

@pytest.mark.parametrize(("document", "line"), [
    ({"prot": 1}, "prot in hexmcp.toml: unknown key"),
    ({"serve": {"prot": 1}}, "serve.prot in hexmcp.toml: unknown key for hexmcp serve"),
    ({"serve": {"max_message_bytes": 9}}, "serve.max_message_bytes in hexmcp.toml: unknown key for hexmcp serve"),
    ({"serve": 3}, "serve in hexmcp.toml: must be a table"),
    ({"port": True}, "port in hexmcp.toml: must be a string or a number, got a boolean"),
    ({"serve": {"port": "eighty"}}, "serve.port in hexmcp.toml: must be a port number (0-65535), got 'eighty'"),
    ({"serve": {"port": 80.5}}, "serve.port in hexmcp.toml: must be a port number (0-65535), got '80.5'"),
    ({"stateless": "yes"}, "stateless in hexmcp.toml: must be true or false, got a string"),
    ({"docs": "README.md"}, "docs in hexmcp.toml: must be an array, got a string"),
    ({"log_level": "loud"}, "log_level in hexmcp.toml: must be one of debug, info, warning, error, got 'loud'"),
    ({"serve": {"head_timeout": 0}}, "serve.head_timeout in hexmcp.toml: must be a positive number of seconds, got 0"),
    ({"call": {"timeout": -1}}, "call.timeout in hexmcp.toml: must be a positive number of seconds, got -1"),
    ({"serve": {"allowed_origins": [["nested"]]}},
     "serve.allowed_origins in hexmcp.toml: must be a string or a number, got an array"),
    ({"upstream": ["kb"]}, "upstream in hexmcp.toml: --upstream 'kb': expected NAME=TARGET"),
    ({"upstream": [{"name": "kb"}]}, "upstream[1].target in hexmcp.toml: is required, as a string"),
    ({"upstream": [{"name": "kb", "target": "ftp://x"}]}, "upstream[1] in hexmcp.toml: not a target: 'ftp://x'"),
    ({"upstream": [{"name": "kb", "target": "http://h/mcp", "headers": {}}]},
     "upstream[1].headers in hexmcp.toml: unknown key"),
    ({"upstream": [{"name": "kb", "target": "http://h/mcp", "wait": 0}]},
     "upstream[1].wait in hexmcp.toml: must be a positive number of seconds, got 0"),
    ({"upstream": [{"name": "kb", "target": "http://h/mcp"}, {"name": "kb", "target": "http://g/mcp"}]},
     "upstream[2].name in hexmcp.toml: a second upstream named 'kb'"),
    ({"upstream": [{"name": "kb", "target": "http://h/mcp", "auth_token_env": "HEXMCP_TEST_UNSET_TOKEN"}]},
     "upstream[1].auth_token_env in hexmcp.toml: names 'HEXMCP_TEST_UNSET_TOKEN', which is not set"),
])
def test_a_bad_file_stops_the_command_with_the_key_and_the_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   document: dict[str, Any], line: str) -> None:
    config = write(tmp_path, document)
    assert refusal(capsys, ["stdio", "--config", str(config)]).startswith(f"hexmcp stdio: invalid configuration: {line}")


@pytest.mark.parametrize(("document", "line"), [
    ({"server": {"port": 8091}}, "server.port in hexmcp.toml: unknown key (did you mean serve.port?)"),
    ({"server": {}}, "server in hexmcp.toml: unknown key (did you mean serve?)"),
    ({"prot": 1}, "prot in hexmcp.toml: unknown key (did you mean port?)"),
    ({"serve": {"prot": 1}}, "serve.prot in hexmcp.toml: unknown key for hexmcp serve (did you mean serve.port?)"),
    ({"serve": {"max_message_bytes": 9}},
     "serve.max_message_bytes in hexmcp.toml: unknown key for hexmcp serve (a setting of hexmcp stdio)"),
    ({"serve": {"zzz": 1}}, "serve.zzz in hexmcp.toml: unknown key for hexmcp serve"),
    ({"upstream": [{"name": "kb", "target": "http://h/mcp", "wiat": 1}]},
     "upstream[1].wiat in hexmcp.toml: unknown key (did you mean upstream[1].wait?)"),
])
def test_an_unknown_key_is_named_in_full_with_the_closest_valid_key(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                    document: dict[str, Any], line: str) -> None:
    config = write(tmp_path, document)
    assert refusal(capsys, ["serve", "--config", str(config)]) == f"hexmcp serve: invalid configuration: {line}"


@pytest.mark.parametrize(("env", "line"), [
    ({"HEXMCP_PORT": "x"}, "HEXMCP_PORT: must be a port number (0-65535), got 'x'"),
    ({"HEXMCP_STATELESS": "maybe"}, "HEXMCP_STATELESS: must be one of"),
    ({"HEXMCP_LOG_LEVEL": "loud"}, "HEXMCP_LOG_LEVEL: must be one of debug, info, warning, error, got 'loud'"),
    ({"HEXMCP_ALLOWED_ORIGINS": "'unclosed"}, "HEXMCP_ALLOWED_ORIGINS: is not a space-separated list"),
])
def test_a_bad_variable_stops_the_command_with_its_name(capsys: pytest.CaptureFixture[str], env: dict[str, str],
                                                         line: str) -> None:
    assert refusal(capsys, ["serve"], env).startswith(f"hexmcp serve: invalid configuration: {line}")


def test_a_missing_or_broken_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "cannot be read" in refusal(capsys, ["serve", "--config", str(tmp_path / "absent.toml")])
    broken = tmp_path / "broken.toml"
    broken.write_text("port = \n", encoding="utf-8")
    assert "is not valid TOML" in refusal(capsys, ["serve"], {CONFIG_ENV: str(broken)})


def test_a_variable_of_another_command_is_not_read(capsys: pytest.CaptureFixture[str]) -> None:
    # HEXMCP_MAX_MESSAGE_BYTES belongs to stdio: serve neither reads nor refuses it
    assert parse(["serve"], {"HEXMCP_MAX_MESSAGE_BYTES": "nonsense"}).port == 8090


# --- upstreams and the gateway from the file ---------------------------------------------------------

def test_upstream_tables_and_flags_by_name(tmp_path: Path) -> None:
    from hexmcp.tools.upstreams.specs import upstream_specs

    config = write(tmp_path, {"upstream": [
        {"name": "kb", "target": "http://127.0.0.1:9/mcp", "auth_token": "table-token", "wait": 2},
        {"name": "tools", "target": "stdio:python -m something", "auth_token_env": "TOOLS_TOKEN"}]})
    args = parse(["serve", "--config", str(config)], {"TOOLS_TOKEN": "from-env"})
    specs = {spec.name: spec for spec in upstream_specs(args)}
    assert specs["kb"].auth_token == "table-token" and specs["kb"].wait_s == 2.0
    assert specs["tools"].auth_token == "from-env" and specs["tools"].target.command == ("python", "-m", "something")
    replaced = {s.name: s for s in upstream_specs(parse(["serve", "--config", str(config), "--upstream",
                                                         "kb=ws://127.0.0.1:9/ws"], {"TOOLS_TOKEN": "t"}))}
    assert str(replaced["kb"].target) == "ws://127.0.0.1:9/ws" and "tools" in replaced


def test_the_gateway_table_ranks_below_the_variables_and_the_old_file(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GATEWAY_URL", "GATEWAY_CONFIG", "TIMEOUT", "MAX_RETRIES", "PROVIDER_TYPE", "DEFAULT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    config = write(tmp_path, {"serve": {"default_model": "from-serve-table"},
                              "gateway": {"url": "http://127.0.0.1:1/v1", "timeout": 7, "retries": {"max": 1},
                                          "providers": {"type": "local", "routing": {"math": "m1"}}}})
    resolved = gateway_config(parse(["serve", "--config", str(config)]))
    assert (resolved.url, resolved.timeout_s, resolved.retries.max_retries) == ("http://127.0.0.1:1/v1", 7.0, 1)
    assert (resolved.provider_type, resolved.routing, resolved.default_model) == ("local", {"math": "m1"},
                                                                                  "from-serve-table")
    monkeypatch.setenv("GATEWAY_URL", "http://127.0.0.1:2/v1")
    monkeypatch.setenv("DEFAULT_MODEL", "from-env")
    resolved = gateway_config(parse(["serve", "--config", str(config)]))
    assert (resolved.url, resolved.default_model) == ("http://127.0.0.1:2/v1", "from-env")
    old = write(tmp_path, {"gateway": {"timeout": 9}}, name="gateway.toml")
    assert gateway_config(parse(["serve", "--config", str(config), "--gateway-config", str(old)])).timeout_s == 9.0
    assert gateway_config(parse(["serve", "--config", str(config), "--gateway-timeout", "3"])).timeout_s == 3.0


def test_an_unknown_gateway_key_is_named_where_it_is_written(tmp_path: Path) -> None:
    config = write(tmp_path, {"gateway": {"retries": {"maximum": 2}}})
    with pytest.raises(GatewayConfigError) as refused:
        gateway_config(parse(["serve", "--config", str(config)]))
    assert (refused.value.key, refused.value.reason) == ("gateway.retries.maximum in hexmcp.toml",
                                                         "unknown key (did you mean max?)")
    config = write(tmp_path, {"gateway": {"providers": {"kind": "local"}}})
    with pytest.raises(GatewayConfigError) as refused:
        gateway_config(parse(["serve", "--config", str(config)]))
    assert refused.value.key == "gateway.providers.kind in hexmcp.toml"


def test_the_documented_example_is_a_valid_config(tmp_path: Path) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    section = page[page.index("## One config file"):]
    example = section[section.index("```toml\n") + len("```toml\n"):section.index("```\n\nAn unknown key")]
    config = tmp_path / "example.toml"
    config.write_text(example, encoding="utf-8")
    args = parse(["serve", "--config", str(config)], {"KB_TOKEN": "kb"})
    assert args.port == 8091 and args.upstream_tables[0].auth_token == "kb"
    assert gateway_config(args).routing == {"math": "qwen3-32b"}
