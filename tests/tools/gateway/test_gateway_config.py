"""Gateway configuration: flag > environment > file > default, the design's file schema, and a bad value
stopping start-up with one stderr line naming the key and the reason (exit 2)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexmcp.tools.gateway.outbound import GatewayConfigError, load_gateway_config
from hexmcp.tools.gateway.outbound.config import SETTINGS
from hexmcp.core.startup import ExitCode

YAML = """
gateway:
  url: http://file.example:8000/v1
  api_key: sk-from-file
  default_model: file-model
  timeout: 12
  retries: {max: 5, delay: 0.5, backoff: linear}
providers:
  type: local
  routing: {math: qwen3-32b, history: llama-3.1-8b-instruct}
log_level: warning
"""


def test_the_file_gives_every_setting_of_the_schema(tmp_path):
    path = tmp_path / "gateway.yaml"
    path.write_text(YAML)
    config = load_gateway_config({}, {}, path)
    assert (config.url, config.api_key, config.default_model, config.timeout_s) == (
        "http://file.example:8000/v1", "sk-from-file", "file-model", 12.0)
    assert (config.retries.max_retries, config.retries.delay_s, config.retries.backoff) == (5, 0.5, "linear")
    assert config.provider_type == "local" and config.log_level == "warning"
    assert dict(config.routing) == {"math": "qwen3-32b", "history": "llama-3.1-8b-instruct"}


def test_toml_reads_the_same(tmp_path):
    path = tmp_path / "gateway.toml"
    path.write_text('[gateway]\nurl = "http://t:1/v1"\n[gateway.retries]\nmax = 0\nbackoff = "exponential"\n'
                    '[providers.routing]\nmath = "m"\n')
    config = load_gateway_config({}, {}, path)
    assert config.url == "http://t:1/v1" and config.retries.max_retries == 0 and dict(config.routing) == {"math": "m"}


def test_precedence_is_flag_then_environment_then_file_then_default(tmp_path):
    path = tmp_path / "gateway.yaml"
    path.write_text(YAML)
    env = {"GATEWAY_URL": "http://env.example/v1", "TIMEOUT": "7", "GATEWAY_CONFIG": str(path)}
    config = load_gateway_config({"gateway_timeout": "3"}, env)
    assert config.url == "http://env.example/v1"  # env over file
    assert config.timeout_s == 3.0  # flag over env
    assert config.default_model == "file-model"  # file over default
    assert config.max_response_bytes == 8 * 1024 * 1024  # default
    assert load_gateway_config({}, {}).configured is False


def test_every_setting_has_a_file_key_and_env_names_match_the_issue():
    envs = {s.env for s in SETTINGS if s.env}
    assert envs == {"GATEWAY_URL", "GATEWAY_API_KEY", "PROVIDER_TYPE", "DEFAULT_MODEL", "TIMEOUT", "MAX_RETRIES",
                    "LOG_LEVEL", "GATEWAY_MAX_TOKENS", "GATEWAY_ALLOWED_MODELS"}


@pytest.mark.parametrize(("env", "key", "reason"), [
    ({"GATEWAY_URL": "ftp://x"}, "GATEWAY_URL", "http:// or https://"),
    ({"GATEWAY_URL": "http://x:99999/v1"}, "GATEWAY_URL", "bad port"),
    ({"TIMEOUT": "soon"}, "TIMEOUT", "must be a number of seconds"),
    ({"TIMEOUT": "0"}, "TIMEOUT", "above 0"),
    ({"MAX_RETRIES": "-1"}, "MAX_RETRIES", "at least 0"),
    ({"MAX_RETRIES": "2.5"}, "MAX_RETRIES", "whole number"),
    ({"PROVIDER_TYPE": "azure"}, "PROVIDER_TYPE", "openai, anthropic, local"),
    ({"LOG_LEVEL": "loud"}, "LOG_LEVEL", "one of"),
])
def test_a_bad_environment_value_names_its_variable(env, key, reason):
    with pytest.raises(GatewayConfigError) as caught:
        load_gateway_config({}, env)
    assert caught.value.key == key and reason in caught.value.reason


@pytest.mark.parametrize(("text", "key", "reason"), [
    ("gateway:\n  retries: {backoff: quadratic}\n", "gateway.retries.backoff in g.yaml", "linear, exponential"),
    ("gateway:\n  retrys: {max: 2}\n", "gateway.retrys in g.yaml", "unknown key"),
    ("gateway: 5\n", "gateway in g.yaml", "must be a mapping"),
    ("providers:\n  routing: [math]\n", "providers.routing in g.yaml", "mapping of category name"),
    ("gateway: [unclosed\n", "--gateway-config", "not valid YAML"),
])
def test_a_bad_file_value_names_its_key(tmp_path, text, key, reason):
    path = tmp_path / "g.yaml"
    path.write_text(text)
    with pytest.raises(GatewayConfigError) as caught:
        load_gateway_config({}, {}, path)
    assert caught.value.key.startswith(key) and reason in caught.value.reason


@given(st.text(max_size=30))
def test_any_timeout_text_is_a_value_or_a_named_refusal(text):
    try:
        config = load_gateway_config({}, {"TIMEOUT": text})
    except GatewayConfigError as error:
        assert error.key == "TIMEOUT"
    else:
        assert config.timeout_s > 0 or not text.strip()


@pytest.mark.slow
@pytest.mark.parametrize("command", ["serve", "stdio"])
def test_invalid_configuration_stops_start_up_with_one_line_and_exit_2(tmp_path, command):
    env = {"PATH": "", "GATEWAY_URL": "http://127.0.0.1:1/v1", "MAX_RETRIES": "many",
           "GATEWAY_API_KEY": "sk-never-printed", "HEXMCP_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "hexmcp.app.cli", command, "--no-classifier", "--no-knowledge"],
                         input=b"", capture_output=True, timeout=60, env=env, check=False)
    assert out.returncode == ExitCode.USAGE
    assert out.stdout == b""
    lines = out.stderr.decode().strip().splitlines()
    assert lines == [f"hexmcp {command}: invalid gateway configuration: MAX_RETRIES: must be a whole number, got 'many'"]


def test_the_public_url_carries_no_credentials():
    config = load_gateway_config({}, {"GATEWAY_URL": "https://user:pa55word@gw.example:8443/v1?key=abc"})
    assert config.public_url() == "https://gw.example:8443/v1"
