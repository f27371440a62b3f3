"""OAuth access tokens as signed JWTs (RFC 9068), checked locally against the issuer's keys.

Checked: the signature (an asymmetric algorithm from the configured list, a key from the issuer's JWKS),
`iss` (the configured issuer), `aud` (this resource's canonical URI, RFC 8707: a token issued for another
server is refused, so tokens cannot be passed through), `exp` and `nbf` with a small leeway. The subject
is `sub` (a client-credentials token's `sub` is its client id); the scopes come from `scope` (RFC 9068)
or `scp` (a list, as some issuers send it).

A client sends the same token on every request until it expires, and checking its signature and claims
costs far more than the rest of a request's gates (ADR 1101: 140-350 µs a token on a loaded 2-core machine,
against 2-6 µs for a remembered one). So a token that passed is remembered, by a digest, until
its `exp` (plus the leeway), in a bounded table that is emptied whenever the issuer's key set changes
(a key withdrawn takes its tokens with it). Refused tokens are not remembered: they cost a full check
each time, which the connection and rate caps bound.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Callable

import jwt

from . import principal as kinds
from .claims import InvalidToken, granted_scopes, subject_of
from .config import OAuthConfig
from .jwks import JwksCache
from .principal import Principal


VERIFIED_CACHE_SIZE = 10_000


class JwtVerifier:
    def __init__(self, config: OAuthConfig, keys: JwksCache | None = None, *,
                 clock: Callable[[], float] = time.time) -> None:
        self._config = config
        self.keys = keys or JwksCache(config)
        self._algorithms = frozenset(config.algorithms)
        self._audiences = list(config.accepted_audiences)
        self._clock = clock
        self._verified: dict[bytes, tuple[Principal, float]] = {}
        self._generation = self.keys.generation

    async def verify(self, token: str, client: str | None = None) -> Principal:
        """`client` (who sent it) matters only to introspection, which asks the issuer per new token."""
        digest = hashlib.sha256(token.encode()).digest()
        if self._generation != self.keys.generation:  # the key set changed: check every token again
            self._verified.clear()
            self._generation = self.keys.generation
        remembered = self._verified.get(digest)
        if remembered is not None:
            if remembered[1] > self._clock():
                return remembered[0]
            del self._verified[digest]
        principal, expires = await self._verify(token)
        if len(self._verified) >= VERIFIED_CACHE_SIZE:
            del self._verified[next(iter(self._verified))]  # the oldest
        self._verified[digest] = (principal, expires)
        return principal

    async def _verify(self, token: str) -> tuple[Principal, float]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidToken("the token is not a JWT") from None
        algorithm = header.get("alg")
        if algorithm not in self._algorithms:
            raise InvalidToken(f"the token's algorithm {algorithm!r} is not accepted")
        kid = header.get("kid")
        key = await self.keys.key(kid if isinstance(kid, str) else None)
        if key is None:
            raise InvalidToken("the token is signed with a key the issuer does not publish")
        return self.check(token, key.key, algorithm)

    def check(self, token: str, key: Any, algorithm: str) -> tuple[Principal, float]:
        """The signature and claims with the key already found; the principal, and until when it holds."""
        try:
            claims = jwt.decode(token, key, algorithms=[algorithm], audience=self._audiences,
                                issuer=self._config.issuer, leeway=self._config.leeway_s,
                                options={"require": ["exp", "iss", "aud"]})
        except jwt.ExpiredSignatureError:
            raise InvalidToken("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise InvalidToken("the token is not valid yet") from None
        except jwt.InvalidAudienceError:
            raise InvalidToken(f"the token was not issued for this resource ({self._config.resource})") from None
        except jwt.InvalidIssuerError:
            raise InvalidToken("the token was issued by another authorization server") from None
        except jwt.PyJWTError as error:
            raise InvalidToken(f"the token is invalid: {error}") from None
        principal = Principal(subject=subject_of(claims), scopes=granted_scopes(claims), method=kinds.JWT)
        return principal, float(claims["exp"]) + self._config.leeway_s
