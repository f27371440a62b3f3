"""OAuth access tokens as signed JWTs (RFC 9068), checked locally against the issuer's keys.

Checked: the signature (an asymmetric algorithm from the configured list, a key from the issuer's JWKS),
`iss` (the configured issuer), `aud` (this resource's canonical URI, RFC 8707: a token issued for another
server is refused, so tokens cannot be passed through), `exp` and `nbf` with a small leeway. The subject
is `sub` (a client-credentials token's `sub` is its client id); the scopes come from `scope` (RFC 9068)
or `scp` (a list, as some issuers send it).
"""

from __future__ import annotations

from typing import Any

import jwt

from . import principal as kinds
from .claims import InvalidToken, granted_scopes, subject_of
from .config import OAuthConfig
from .jwks import JwksCache
from .principal import Principal


class JwtVerifier:
    def __init__(self, config: OAuthConfig, keys: JwksCache | None = None) -> None:
        self._config = config
        self.keys = keys or JwksCache(config)
        self._algorithms = frozenset(config.algorithms)
        self._audiences = list(config.accepted_audiences)

    async def verify(self, token: str) -> Principal:
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

    def check(self, token: str, key: Any, algorithm: str) -> Principal:
        """The signature and claims, with the key already found (the hot path once keys are cached)."""
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
        return Principal(subject=subject_of(claims), scopes=granted_scopes(claims), method=kinds.JWT)
