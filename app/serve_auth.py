"""`hexmcp serve`'s authentication, settled before anything is served: where the token comes from, and
the refusal to listen beyond loopback with none.

The token comes from `--auth-token-file` (its first line; a Kubernetes Secret mounted as a file, say) or
from `$HEXMCP_AUTH_TOKEN` (a Secret as an environment variable). `--auth-token T` still works but puts
the token in every `ps` listing, so start-up says so. Workers (`--workers N`) get the settled token in
their environment, never on their command line (start/workers.py).

A server bound to anything but a loopback address, with no authentication configured, is refused in one
line unless `--allow-unauthenticated` says the operator means it: a shipped deployment binds 0.0.0.0, and
an open one lets any pod on the network index, drop vectors or spend the gateway's key.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from pathlib import Path

from hexmcp.core.pack import PackProblem

TOKEN_PLACEHOLDER = "REPLACE-ME"
"""How the shipped Secret manifest's token begins (deploy/k8s/secret.yaml): refused, so a deployment
applied without editing it does not run with a token everyone can read."""
STATE_SECRET_ENV = "HEXMCP_STATE_SECRET"
AUDIT_SALT_ENV = "HEXMCP_AUDIT_SALT"  # adapters/audit/salt.py reads it; the same Secret holds its placeholder
SECRET_ENVS = (STATE_SECRET_ENV, AUDIT_SALT_ENV)
"""Variables the shipped Secret fills besides the token: one still holding its placeholder is refused."""
OTHER_AUTH_SETTINGS: tuple[str, ...] = ("oauth_issuer", "oauth_introspection_url")
"""Settings that configure authentication besides the static token (OAuth, where that is built); any of
them set counts as authenticated. Names a settings object does not have are ignored."""
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
_FIX = ("set HEXMCP_AUTH_TOKEN or --auth-token-file, or pass --allow-unauthenticated to serve anyone who can "
        "reach the port")


def add_serve_auth_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--auth-token-file", metavar="PATH",
                        help="read the bearer token from this file's first line (default: $HEXMCP_AUTH_TOKEN_FILE); "
                             "unlike --auth-token it never shows in ps")
    parser.add_argument("--allow-unauthenticated", action="store_true",
                        help="serve on a non-loopback --host with no token (refused by default)")


def settle_serve_auth(settings: argparse.Namespace) -> None:
    """Read the token file into `settings.auth_token`, then refuse what must not be served; PackProblem
    (one line, exit 2) for each refusal."""
    path = getattr(settings, "auth_token_file", None)
    if path:
        from_file = _read_token(Path(path))
        if settings.auth_token and settings.auth_token != from_file:
            raise PackProblem(f"two different auth tokens: --auth-token-file {path} and --auth-token (or "
                              "$HEXMCP_AUTH_TOKEN); give one")
        settings.auth_token = from_file
    token = settings.auth_token or None
    if token is not None and token.startswith(TOKEN_PLACEHOLDER):
        raise PackProblem("the auth token is the deployment's placeholder; put a real one in the Secret "
                          "(e.g. `openssl rand -hex 32`)")
    for variable in SECRET_ENVS:
        if os.environ.get(variable, "").startswith(TOKEN_PLACEHOLDER):
            raise PackProblem(f"{variable} is the deployment's placeholder; put a real one in the Secret "
                              "(e.g. `openssl rand -hex 32`)")
    if token is not None and not path and _on_command_line(token):
        print("hexmcp serve: warning: --auth-token shows in ps; prefer $HEXMCP_AUTH_TOKEN or --auth-token-file",
              file=sys.stderr, flush=True)
    authenticated = token is not None or any(getattr(settings, name, None) for name in OTHER_AUTH_SETTINGS)
    if not authenticated and not is_loopback(settings.host) and not settings.allow_unauthenticated:
        raise PackProblem(f"refusing to serve on {settings.host or 'every interface'} without authentication; "
                          f"fix: {_FIX}")
    if getattr(settings, "stateless", False) and not os.environ.get(STATE_SECRET_ENV):
        print(f"hexmcp serve: warning: --stateless without ${STATE_SECRET_ENV}: this instance seals multi "
              "round-trip requests with a key of its own, which other instances behind the balancer refuse; "
              "set the same secret on all of them", file=sys.stderr, flush=True)


def is_loopback(host: str) -> bool:
    name = host.strip().strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


def _read_token(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise PackProblem(f"cannot read the auth token file {path}: {reason}") from None
    token = text.splitlines()[0].strip() if text.strip() else ""
    if not token:
        raise PackProblem(f"the auth token file {path} is empty")
    return token


def _on_command_line(token: str) -> bool:
    return any(word == token or word.endswith(f"={token}") for word in sys.argv[1:])
