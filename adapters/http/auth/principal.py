"""`Principal`: who a request was authenticated as, and what it may do."""

from __future__ import annotations

import attrs

TOKEN = "token"  # the static bearer token (`--auth-token`)
JWT = "oauth-jwt"  # an OAuth access token checked against the issuer's keys
INTROSPECTION = "oauth-introspection"  # an OAuth access token the issuer vouched for (RFC 7662)


@attrs.frozen
class Principal:
    subject: str
    """The token's `sub` (OAuth), or the configured name of the static token."""
    scopes: frozenset[str] | None
    """What the token grants; None: everything (the static token is the operator's own key)."""
    method: str
    """How it was authenticated: TOKEN, JWT or INTROSPECTION."""

    @property
    def identity(self) -> str:
        """The client identity for rate limits, task ownership, queue shares and the audit trail.
        Only ever built from what was authenticated, never from what a client merely sent."""
        return f"token:{self.subject}" if self.method == TOKEN else f"oauth:{self.subject}"

    def lacks(self, needed: frozenset[str]) -> frozenset[str]:
        """The scopes of `needed` this principal was not granted."""
        return frozenset() if self.scopes is None else needed - self.scopes
