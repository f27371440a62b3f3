"""`Authenticator`: a request's `Authorization` header → the `Principal` it proves, or the refusal.

The static token is compared in constant time; anything else that looks like a bearer token goes to the
OAuth verifier (JWT or introspection) when one is configured. Failures become the challenges of
`challenge.py`: a client learns where to get a token, never why a guess was close.
"""

from __future__ import annotations

import hmac
from typing import Any, Awaitable, Callable

import structlog

from hexmcp.core import ErrorCode

from ...retry_hint import RETRY_AFTER_KEY, retry_after_header
from ..client_identity import client_identity
from ..guard import Refusal
from ..request import HttpRequest
from . import principal as kinds
from .challenge import Challenges
from .config import INTROSPECTION, OAuthConfig
from .claims import InvalidToken
from .introspection import Introspector, IssuerUnavailable, TooManyChecks, TooManyNewTokens
from .metadata import metadata_url
from .principal import Principal
from .scopes import ScopePolicy

log = structlog.get_logger("hexmcp.adapters.http.auth")

ISSUER_UNAVAILABLE = Refusal(code=ErrorCode.SERVER_BUSY, message="The authorization server cannot be reached: retry later",
                             headers=((b"retry-after", b"5"),))
TOO_MANY_CHECKS = Refusal(code=ErrorCode.SERVER_BUSY,
                          message="Too many new tokens from this client are being checked: retry shortly",
                          headers=((b"retry-after", b"1"),))


def bearer_token(request: HttpRequest) -> bytes | None:
    """The token of an `Authorization: Bearer <token>` header (the scheme in any case), else None."""
    value = request.header(b"authorization")
    if value is None:
        return None
    scheme, _, token = value.strip().partition(b" ")
    token = token.strip()
    return token if scheme.lower() == b"bearer" and token else None


class Authenticator:
    def __init__(self, *, token: str | None = None, token_name: str = "token", oauth: OAuthConfig | None = None) -> None:
        if token is None and oauth is None:
            raise ValueError("an authenticator needs a static token, OAuth, or both")
        self._token = token.encode() if token else None
        self._token_principal = Principal(subject=token_name, scopes=None, method=kinds.TOKEN)
        self.oauth = oauth
        self.policy: ScopePolicy | None = None
        self.verifier: Any = None  # a jwt_tokens.JwtVerifier or an introspection.Introspector
        if oauth is not None:
            self.policy = ScopePolicy(oauth.scopes)
            if oauth.validation == INTROSPECTION:
                self.verifier = Introspector(oauth)
            else:
                from .jwt_tokens import JwtVerifier  # PyJWT (hexmcp[oauth]): imported only when JWTs are checked

                self.verifier = JwtVerifier(oauth)
            self.challenges = Challenges(metadata_url=metadata_url(oauth), scopes=self.policy.all_scopes)
        else:
            self.challenges = Challenges(metadata_url=None)

    async def authenticate(self, request: HttpRequest) -> Principal | Refusal:
        token = bearer_token(request)
        if token is None:
            return self.challenges.missing
        if self._token is not None and hmac.compare_digest(token, self._token):
            return self._token_principal
        if self.verifier is None:
            return self.challenges.missing
        try:
            return await self.verifier.verify(token.decode("latin-1"), client_identity(request))
        except InvalidToken as error:
            return self.challenges.invalid(str(error))
        except TooManyChecks:
            return TOO_MANY_CHECKS
        except TooManyNewTokens as error:
            return Refusal(code=ErrorCode.RATE_LIMITED,
                           message=f"Too many new tokens from this client: retry in {error.retry_after_s:.1f} s",
                           headers=tuple(retry_after_header({RETRY_AFTER_KEY: error.retry_after_s})))
        except IssuerUnavailable as error:
            log.warning("token introspection failed", error=str(error))
            return ISSUER_UNAVAILABLE

    def insufficient_scope(self, principal: Principal, needed: frozenset[str]) -> Refusal | None:
        """The 403 for a principal lacking any of `needed`, else None."""
        if not needed or not principal.lacks(needed):
            return None
        return self.challenges.insufficient(needed, principal.scopes)

    def background(self) -> list[Callable[[], Awaitable[Any]]]:
        """Work the app runs while it serves: keeping the issuer's keys fresh."""
        keys = getattr(self.verifier, "keys", None)  # a JwtVerifier's JWKS cache
        return [keys.keep_fresh] if keys is not None else []


def build_authenticator(*, token: str | None, token_name: str, oauth: OAuthConfig | None) -> Authenticator | None:
    """The authenticator a configuration asks for; None when it asks for no authentication at all."""
    if token is None and oauth is None:
        return None
    return Authenticator(token=token, token_name=token_name, oauth=oauth)
