"""The gateway's configuration: flags, environment, a YAML or TOML file, defaults, in that precedence.

Each setting is one row of `SETTINGS`: where it sits in the file (the design's schema:
`gateway.url`, `gateway.retries.{max, delay, backoff}`, `providers.type`, `providers.routing`, ...),
its environment variable, its flag, and how its text is parsed. A value that cannot work raises
`GatewayConfigError` naming the key as the operator wrote it (`TIMEOUT`, `--gateway-timeout`,
`gateway.retries.backoff in gateway.yaml`) and the reason; the command prints it and exits 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import urlsplit

import attrs

from hexmcp.core.suggestions import did_you_mean
from .retry import BACKOFFS, RetryPolicy

from ..providers import PROVIDER_TYPES
LOG_LEVELS = ("debug", "info", "warning", "error")
CONFIG_ENV = "GATEWAY_CONFIG"


class GatewayConfigError(ValueError):
    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"invalid gateway configuration: {key}: {reason}")
        self.key = key
        self.reason = reason


@attrs.frozen(kw_only=True)
class GatewayConfig:
    url: str | None = None
    """Base URL of an OpenAI-compatible API (`.../v1`); None: no gateway, the tools answer -32005."""
    api_key: str | None = attrs.field(default=None, repr=False)
    provider_type: str = "openai"
    default_model: str | None = None
    """Used when neither the caller nor the routing names a model; None: the classifier's recommendation."""
    timeout_s: float = 60.0
    retries: RetryPolicy = RetryPolicy()
    max_response_bytes: int = 8 * 1024 * 1024
    models_refresh_s: float = 60.0
    """How often the models list is fetched again (resource list-changed notifications follow changes)."""
    routing: Mapping[str, str] = attrs.field(factory=dict)
    """`providers.routing`: category name -> model, overriding the taxonomy's recommendation."""
    max_tokens: int = 8192
    """The most completion tokens one routeCompletion may ask for; also sent when the caller names none, so
    every call on the operator's key has a bound."""
    allowed_models: tuple[str, ...] = ()
    """Models a caller may name in routeCompletion besides those the routing can choose; `*`: any model."""
    log_level: str | None = None

    @property
    def configured(self) -> bool:
        return self.url is not None

    def public_url(self) -> str | None:
        """The URL without credentials or query (what /health and the logs may show)."""
        if self.url is None:
            return None
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}{parts.path}"


# --- parsers: text (or a file's typed value) to a value, or ValueError saying why -------------------

def _url(value: Any) -> str:
    text = str(value).strip().rstrip("/")
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"must be an http:// or https:// URL with a host, got {text!r}")
    try:
        parts.port
    except ValueError:
        raise ValueError(f"has a bad port: {text!r}") from None
    return text


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a non-empty string")
    return value.strip()


def _choice(options: tuple[str, ...]) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        text = str(value).strip().lower()
        if text not in options:
            raise ValueError(f"must be one of {', '.join(options)}, got {value!r}")
        return text
    return parse


def _number(minimum: float, *, above: bool, unit: str = "") -> Callable[[Any], float]:
    def parse(value: Any) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"must be a number{unit}, got {value!r}") from None
        if isinstance(value, bool) or number != number or number == float("inf") or \
                (number <= minimum if above else number < minimum):
            raise ValueError(f"must be a number{unit} {'above' if above else 'at least'} {minimum:g}, got {value!r}")
        return number
    return parse


def _count(minimum: int) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError(f"must be a whole number, got {value!r}")
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"must be a whole number, got {value!r}") from None
        if number < minimum:
            raise ValueError(f"must be at least {minimum}, got {number}")
        return number
    return parse


def _models(value: Any) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(item, str) for item in items):
        raise ValueError("must be a list of model names (or a comma-separated string)")
    return tuple(item.strip() for item in items if item.strip())


def _routing(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ValueError("must be a mapping of category name to model")
    for category, model in value.items():
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"the model for category {category!r} must be a non-empty string")
    return {str(category): model.strip() for category, model in value.items()}


@attrs.frozen(kw_only=True)
class Setting:
    path: tuple[str, ...]  # where it sits in the config file
    field: str  # GatewayConfig attribute, or "retries.<RetryPolicy attribute>"
    parse: Callable[[Any], Any]
    env: str | None = None
    flag: str | None = None  # argparse dest; shown as --dest-with-dashes


SECONDS = " of seconds"
SETTINGS: tuple[Setting, ...] = (
    Setting(path=("gateway", "url"), field="url", parse=_url, env="GATEWAY_URL", flag="gateway_url"),
    Setting(path=("gateway", "api_key"), field="api_key", parse=_text, env="GATEWAY_API_KEY"),
    Setting(path=("providers", "type"), field="provider_type", parse=_choice(PROVIDER_TYPES), env="PROVIDER_TYPE",
            flag="provider_type"),
    Setting(path=("gateway", "default_model"), field="default_model", parse=_text, env="DEFAULT_MODEL",
            flag="default_model"),
    Setting(path=("gateway", "timeout"), field="timeout_s", parse=_number(0, above=True, unit=SECONDS),
            env="TIMEOUT", flag="gateway_timeout"),
    Setting(path=("gateway", "max_response_bytes"), field="max_response_bytes", parse=_count(1)),
    Setting(path=("gateway", "models_refresh"), field="models_refresh_s", parse=_number(0, above=True, unit=SECONDS)),
    Setting(path=("gateway", "retries", "max"), field="retries.max_retries", parse=_count(0), env="MAX_RETRIES",
            flag="max_retries"),
    Setting(path=("gateway", "retries", "delay"), field="retries.delay_s", parse=_number(0, above=False, unit=SECONDS)),
    Setting(path=("gateway", "retries", "backoff"), field="retries.backoff", parse=_choice(BACKOFFS)),
    Setting(path=("gateway", "retries", "max_delay"), field="retries.max_delay_s",
            parse=_number(0, above=False, unit=SECONDS)),
    Setting(path=("gateway", "retries", "retry_after_cap"), field="retries.retry_after_cap_s",
            parse=_number(0, above=False, unit=SECONDS)),
    Setting(path=("providers", "routing"), field="routing", parse=_routing),
    Setting(path=("gateway", "max_tokens"), field="max_tokens", parse=_count(1), env="GATEWAY_MAX_TOKENS",
            flag="gateway_max_tokens"),
    Setting(path=("gateway", "allowed_models"), field="allowed_models", parse=_models, env="GATEWAY_ALLOWED_MODELS"),
    Setting(path=("log_level",), field="log_level", parse=_choice(LOG_LEVELS), env="LOG_LEVEL"),
)
_KNOWN_PATHS = {s.path for s in SETTINGS}


def load_gateway_config(flags: Mapping[str, Any], env: Mapping[str, str], file: str | Path | None = None, *,
                        table: Mapping[str, Any] | None = None, table_file: str = "the config file",
                        table_flags: Mapping[str, Any] | None = None) -> GatewayConfig:
    """Resolve every setting, flag > environment > file > default; raise GatewayConfigError on a bad one.

    `table` is the `[gateway]` table of hexmcp's one config file (`--config`): `gateway.*` keys at its
    top, `providers.*` under `providers`; `table_flags` are flag values that file gave (`gateway_url =`
    in its `[serve]` table, say). Both rank below the `--gateway-config` file, kept for compatibility."""
    path = file if file is not None else (env.get(CONFIG_ENV) or None)
    document = _read_file(Path(path)) if path is not None else {}
    folded = _fold_table(table or {}, table_file)
    top: dict[str, Any] = {}
    retries: dict[str, Any] = {}
    for setting in SETTINGS:
        found = (_from_flags(setting, flags, "") or _from_env(setting, env) or _from_document(setting, document, path)
                 or _from_table(setting, folded, table_file) or _from_flags(setting, table_flags or {}, f" in {table_file}"))
        if found is None:
            continue
        key, raw = found
        try:
            value = setting.parse(raw)
        except ValueError as error:
            raise GatewayConfigError(key, str(error)) from None
        target, _, name = setting.field.rpartition(".")
        (retries if target == "retries" else top)[name] = value
    return GatewayConfig(**top, retries=RetryPolicy(**retries))


def _from_flags(setting: Setting, flags: Mapping[str, Any], suffix: str) -> tuple[str, Any] | None:
    if setting.flag is not None and flags.get(setting.flag) is not None:
        return "--" + setting.flag.replace("_", "-") + suffix, flags[setting.flag]
    return None


def _from_env(setting: Setting, env: Mapping[str, str]) -> tuple[str, Any] | None:
    if setting.env is not None and env.get(setting.env, "").strip():
        return setting.env, env[setting.env]
    return None


def _from_document(setting: Setting, document: dict[str, Any], path: str | Path | None) -> tuple[str, Any] | None:
    node: Any = document
    for part in setting.path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return f"{'.'.join(setting.path)} in {Path(str(path)).name}", node


def _from_table(setting: Setting, folded: dict[str, Any], table_file: str) -> tuple[str, Any] | None:
    found = _from_document(setting, folded, table_file)
    return None if found is None else (f"{_table_key(setting.path)} in {table_file}", found[1])


def _table_key(path: tuple[str, ...]) -> str:
    """Where a setting sits in the `[gateway]` table: `gateway.retries.max`, `gateway.providers.type`."""
    return ".".join(("gateway", *(path[1:] if path[0] == "gateway" else path)))


def _fold_table(table: Mapping[str, Any], table_file: str) -> dict[str, Any]:
    """The `[gateway]` table in this module's document shape; GatewayConfigError on an unknown key."""
    document: dict[str, Any] = {"gateway": {k: v for k, v in table.items() if k != "providers"}}
    if "providers" in table:
        document["providers"] = table["providers"]
    _refuse_unknown(document, (), lambda here: f"{_table_key(here)} in {table_file}")
    return document


def _read_file(path: Path) -> dict[str, Any]:
    where = f"--gateway-config {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise GatewayConfigError(where, f"cannot be read ({error.strerror or error})") from None
    import tomllib  # only with a config file, as PyYAML: neither is on `hexmcp stdio`'s start path

    import yaml

    try:
        document = tomllib.loads(text) if path.suffix.lower() == ".toml" else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as error:
        raise GatewayConfigError(where, f"is not valid {'TOML' if path.suffix.lower() == '.toml' else 'YAML'} "
                                        f"({str(error).splitlines()[0]})") from None
    document = {} if document is None else document
    if not isinstance(document, dict):
        raise GatewayConfigError(where, "must hold a mapping (gateway:, providers:, log_level:)")
    _refuse_unknown(document, (), lambda here: f"{'.'.join(here)} in {path.name}")
    return document


def _refuse_unknown(node: dict[str, Any], prefix: tuple[str, ...], label: Callable[[tuple[str, ...]], str]) -> None:
    """A misspelt key is reported, not silently ignored (`providers.routing` holds free category names)."""
    for key, value in node.items():
        here = (*prefix, str(key))
        if here in _KNOWN_PATHS:
            continue
        if any(known[:len(here)] == here for known in _KNOWN_PATHS):
            if not isinstance(value, dict):
                raise GatewayConfigError(label(here), "must be a mapping")
            _refuse_unknown(value, here, label)
            continue
        siblings = [known[len(prefix)] for known in _KNOWN_PATHS
                    if len(known) > len(prefix) and known[:len(prefix)] == prefix]
        raise GatewayConfigError(label(here), "unknown key" + did_you_mean(str(key), siblings))
