"""OAuth access tokens checked by asking the issuer (RFC 7662 token introspection), with a short cache.

For opaque tokens, or when revocation must take effect within seconds. The answer must say `active`,
name this resource in `aud` (RFC 8707: a token for another server is refused) and, when it names an
issuer, the configured one. Answers are kept for `introspection_cache_s` (never past the token's `exp`),
keyed by a digest of the token, in a bounded table; negative answers too, so a client retrying a dead
token does not reach the issuer each time. At most `MAX_IN_FLIGHT` introspection requests run at once,
and one client (its address: nobody is authenticated yet) has at most `PER_CLIENT_IN_FLIGHT` of them
asked or waiting: a flood of made-up tokens from one address, each new and so each asked about, made
every other client's first request wait behind it (ping with a fresh token: 9 ms alone, 184 ms beside
64 such requests at once) and sent the issuer as many requests as the flood had tokens. The in-flight cap
bounds how many wait, not how many a second: against an issuer answering in 5 ms one address could still
have it asked ~800 times a second. So each client may also have at most `NEW_TOKENS.rate` checked a second
(`NEW_TOKENS.burst` at once), the rest answered 429 with when to retry; a token once checked is answered
from the cache and spends nothing.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import hashlib
import time
from typing import Any, Callable
from urllib.parse import quote

import attrs

from ...held_open import HeldOpen
from ...limits import BucketRate, TokenBuckets
from . import principal as kinds
from .config import OAuthConfig
from .discovery import endpoint
from .fetch import FetchError, fetch_json
from .claims import InvalidToken, granted_scopes, subject_of
from .principal import Principal

MAX_IN_FLIGHT = 16
PER_CLIENT_IN_FLIGHT = 4
WAITING_AT_MOST = 1024  # tokens asked about or waiting for a turn, from every client together
NEW_TOKENS = BucketRate(rate=10, burst=20)
"""Tokens the issuer is asked about per client: a real client presents a new token a few times an hour."""


class IssuerUnavailable(Exception):
    """The issuer could not be asked: the request can be retried, the token is not known to be bad."""


class TooManyChecks(Exception):
    """This client already has `PER_CLIENT_IN_FLIGHT` tokens being asked about: retry shortly."""


class TooManyNewTokens(Exception):
    """This client presented more new tokens than `NEW_TOKENS` allows: retry after `retry_after_s`."""

    def __init__(self, retry_after_s: float) -> None:
        super().__init__(f"too many new tokens: retry in {retry_after_s:.1f} s")
        self.retry_after_s = retry_after_s


@attrs.frozen
class _Answer:
    principal: Principal | None
    reason: str
    until: float


class Introspector:
    def __init__(self, config: OAuthConfig, *, clock: Callable[[], float] = time.time) -> None:
        self._config = config
        self._url = config.introspection_url
        self._clock = clock
        self._cache: collections.OrderedDict[bytes, _Answer] = collections.OrderedDict()
        self._gate = asyncio.Semaphore(MAX_IN_FLIGHT)
        self._asking = HeldOpen(what="token checks", per_client=PER_CLIENT_IN_FLIGHT, total=WAITING_AT_MOST)
        self._new_tokens = TokenBuckets(NEW_TOKENS)
        # RFC 6749 §2.3.1: client id and secret are form-encoded before they go into Basic credentials.
        pair = f"{quote(config.client_id or '', safe='')}:{quote(config.client_secret or '', safe='')}"
        self._headers = {"authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
        self.requests = 0  # introspection requests sent (for tests and operators)

    async def verify(self, token: str, client: str | None = None) -> Principal:
        """`client`: who sent the token (`client_identity`, an address before authentication)."""
        digest = hashlib.sha256(token.encode()).digest()
        now = self._clock()
        cached = self._cache.get(digest)
        if cached is not None and cached.until > now:
            self._cache.move_to_end(digest)
            if cached.principal is None:
                raise InvalidToken(cached.reason)
            return cached.principal
        admission = self._new_tokens.take(client, time.monotonic())
        if not admission.admitted:
            raise TooManyNewTokens(admission.retry_after_s)
        refused = self._asking.take(client)
        if refused is not None:
            raise TooManyChecks(refused)
        try:
            answer = await self._ask(token)
        finally:
            self._asking.give(client)
        result = self._judge(answer, now)
        self._remember(digest, result)
        if result.principal is None:
            raise InvalidToken(result.reason)
        return result.principal

    async def _ask(self, token: str) -> Any:
        async with self._gate:
            try:
                if self._url is None:
                    self._url = await endpoint(self._config.issuer, "introspection_endpoint",
                                               timeout_s=self._config.fetch_timeout_s)
                self.requests += 1
                return await fetch_json(self._url, form={"token": token, "token_type_hint": "access_token"},
                                        headers=self._headers, timeout_s=self._config.fetch_timeout_s)
            except FetchError as error:
                if error.status == 400:
                    # The issuer refuses the request for this token (some will not introspect a JWT they
                    # did not mean to be introspected): a token it does not vouch for, not an outage.
                    return {"active": False, "refused": True}
                raise IssuerUnavailable(str(error)) from None

    def _judge(self, answer: Any, now: float) -> _Answer:
        until = now + self._config.introspection_cache_s
        if not isinstance(answer, dict) or answer.get("active") is not True:
            refused = isinstance(answer, dict) and answer.get("refused")
            return _Answer(None, "the issuer would not introspect the token" if refused else "the token is not active",
                           until)
        issuer = answer.get("iss")
        if issuer is not None and str(issuer).rstrip("/") != self._config.issuer:
            return _Answer(None, "the token was issued by another authorization server", until)
        audience = answer.get("aud")
        audiences = [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
        if not set(audiences) & set(self._config.accepted_audiences):
            return _Answer(None, f"the token was not issued for this resource ({self._config.resource})", until)
        leeway = self._config.leeway_s
        expires = answer.get("exp")
        if isinstance(expires, (int, float)):
            if expires + leeway <= now:
                return _Answer(None, "the token has expired", until)
            until = min(until, expires + leeway)
        not_before = answer.get("nbf")
        if isinstance(not_before, (int, float)) and not_before - leeway > now:
            return _Answer(None, "the token is not valid yet", min(until, not_before - leeway))
        try:
            subject = subject_of(answer)
        except InvalidToken as error:
            return _Answer(None, str(error), until)
        return _Answer(Principal(subject=subject, scopes=granted_scopes(answer), method=kinds.INTROSPECTION), "",
                       until)

    def _remember(self, digest: bytes, answer: _Answer) -> None:
        if self._config.introspection_cache_s <= 0:
            return
        self._cache[digest] = answer
        self._cache.move_to_end(digest)
        while len(self._cache) > self._config.introspection_cache_size:
            self._cache.popitem(last=False)
