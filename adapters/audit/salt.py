"""Client identities as the audit trail writes them: keyed digests under a per-deployment salt.

An identity (`token:<digest>`, `address:<ip>`, an OAuth subject: whatever the transport says) written as
is, or as a plain SHA-256, can be reversed by anyone who can list candidates (a token seen elsewhere, the
addresses of a subnet). HMAC-SHA256 under a secret salt keeps what an auditor needs — the same client has
the same id in every line and every rotated file — and gives nothing to reverse without the salt.

The salt comes from $HEXMCP_AUDIT_SALT (a Secret in a deployment), else from a file (`--audit-salt-file`,
default `FILE.salt` beside the trail), which is generated on first use and kept: a restart, and every
worker of `serve --workers N`, salt alike. Creating it races safely: the salt is written to a private
temporary file and linked into place, and whoever loses the link reads the winner's.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from typing import Mapping

SALT_ENV = "HEXMCP_AUDIT_SALT"
MIN_SALT_BYTES = 16
_ID_HEX = 32  # 128 bits: no two clients of a deployment collide
_KIND = re.compile(r"^([a-z][a-z0-9_-]{0,15}):")
_CACHE_LIMIT = 4096


class SaltError(Exception):
    """The salt cannot be read or made: start-up stops (an audit trail with unsalted ids is not kept)."""


def deployment_salt(path: str, environ: Mapping[str, str] = os.environ) -> bytes:
    """$HEXMCP_AUDIT_SALT, else the salt file at `path`, created (0600) with 32 random bytes if absent."""
    given = environ.get(SALT_ENV)
    if given is not None:
        return _checked(given.encode(), f"${SALT_ENV}")
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    temporary = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, secrets.token_hex(32).encode() + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temporary, path)  # atomic, and fails if another process made it first
        except FileExistsError:
            pass
        return _read(path)
    except OSError as error:
        raise SaltError(f"cannot create the audit salt file {path}: {error.strerror or error}") from None
    finally:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return _checked(file.read().strip(), path)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise SaltError(f"cannot read the audit salt file {path}: {error.strerror or error}") from None


def _checked(salt: bytes, source: str) -> bytes:
    if len(salt) < MIN_SALT_BYTES:
        raise SaltError(f"the audit salt from {source} is shorter than {MIN_SALT_BYTES} bytes")
    return salt


class ClientIds:
    """`identity` → `<kind>:<hmac>`: the kind (`token`, `address`, `subject`...) stays readable, the rest
    is HMAC-SHA256(salt, whole identity), 128 bits in hex."""

    def __init__(self, salt: bytes) -> None:
        self._salt = salt
        self._known: dict[str, str] = {}  # clients repeat from line to line

    def of(self, identity: str | None) -> str | None:
        if identity is None:
            return None
        known = self._known.get(identity)
        if known is None:
            if len(self._known) >= _CACHE_LIMIT:
                self._known.clear()  # clients choose their identities: the cache must not grow without end
            match = _KIND.match(identity)
            digest = hmac.new(self._salt, identity.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
            known = self._known[identity] = f"{match.group(1) if match else 'client'}:{digest[:_ID_HEX]}"
        return known
