"""What an access token's claims (from a JWT or an introspection answer) say about its holder."""

from __future__ import annotations

from typing import Any


class InvalidToken(Exception):
    """The token cannot be accepted; the message is safe to show the client (`error_description`)."""


def granted_scopes(claims: dict[str, Any]) -> frozenset[str]:
    """The scopes from `scope` (RFC 9068, RFC 7662: space-separated) or `scp` (a list, as some issuers send)."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    scp = claims.get("scp")
    if isinstance(scp, list):
        return frozenset(item for item in scp if isinstance(item, str))
    if isinstance(scp, str):
        return frozenset(scp.split())
    return frozenset()


def subject_of(claims: dict[str, Any]) -> str:
    """`sub`, else `client_id` (a client acting for itself); InvalidToken when neither is there."""
    subject = claims.get("sub") or claims.get("client_id")
    if not isinstance(subject, str) or not subject:
        raise InvalidToken("the token names no subject")
    return subject
