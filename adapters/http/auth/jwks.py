"""The issuer's signing keys, fetched off the hot path and kept: a token names its key (`kid`), and a
key not seen before makes one refresh (the issuer rotated), at most one every `jwks_min_interval_s`.

Every refresh is single-flight: a burst of tokens naming an unknown key waits on one fetch. A token
naming a key that is still unknown after the refresh is refused, and forged `kid`s cannot make the
server fetch more often than the minimum interval allows. A failed fetch keeps the keys held so far.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any, Awaitable, Callable

import structlog
from jwt import PyJWK
from jwt.exceptions import PyJWKError

from .config import OAuthConfig
from .discovery import endpoint
from .fetch import FetchError, fetch_json

log = structlog.get_logger("hexmcp.adapters.http.auth")

MAX_KEYS = 64  # an issuer publishes a handful; more is a misconfiguration or an attack on memory


def parse_jwks(document: Any) -> dict[str, tuple[PyJWK, dict[str, Any]]]:
    """The signing keys of a JWKS document by `kid` (a key without one under ""), each with the JWK it was
    read from; unusable keys are skipped."""
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise FetchError("the JWKS has no 'keys' list")
    found: dict[str, tuple[PyJWK, dict[str, Any]]] = {}
    for data in keys[:MAX_KEYS]:
        if not isinstance(data, dict) or data.get("use", "sig") != "sig":
            continue
        try:
            key = PyJWK(data)
        except (PyJWKError, ValueError, TypeError) as error:
            log.info("JWKS key skipped", kid=data.get("kid"), kty=data.get("kty"), reason=str(error))
            continue
        found[str(data.get("kid", ""))] = (key, data)
    return found


class JwksCache:
    def __init__(self, config: OAuthConfig, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._config = config
        self._url = config.jwks_url
        self._clock = clock
        self._keys: dict[str, PyJWK] = {}
        self._published: dict[str, dict[str, Any]] = {}  # the JWKs as the issuer sent them
        self._fetched_at = -math.inf
        self._refreshing: asyncio.Future[None] | None = None
        self.fetches = 0  # how many times the JWKS was read (for tests and operators)
        self.generation = 0  # counts changes of the key set: what was verified with the old set is checked again

    def cached(self, kid: str | None) -> PyJWK | None:
        """The key named `kid` if held (a token without a `kid` may use the only key of a one-key set)."""
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    async def key(self, kid: str | None) -> PyJWK | None:
        """The key named `kid`, refreshing the set once if it is unknown and the last fetch is old enough."""
        key = self.cached(kid)
        if key is not None:
            return key
        if self._clock() - self._fetched_at >= self._config.jwks_min_interval_s or self._refreshing is not None:
            await self.refresh()
        return self.cached(kid)

    def refresh(self) -> Awaitable[None]:
        """Fetch the set again (single-flight: callers during a fetch share it). Never raises."""
        if self._refreshing is None:
            self._refreshing = asyncio.ensure_future(self._fetch())
        return asyncio.shield(self._refreshing)

    async def _fetch(self) -> None:
        try:
            if self._url is None:
                self._url = await endpoint(self._config.issuer, "jwks_uri", timeout_s=self._config.fetch_timeout_s)
            keys = parse_jwks(await fetch_json(self._url, timeout_s=self._config.fetch_timeout_s))
            self.fetches += 1
            published = {kid: data for kid, (_, data) in keys.items()}
            if keys and published != self._published:
                self._keys = {kid: key for kid, (key, _) in keys.items()}
                self._published = published
                self.generation += 1
            log.info("JWKS fetched", url=self._url, kids=sorted(keys))
        except FetchError as error:
            log.warning("JWKS not fetched; keeping the keys held", error=str(error), held=len(self._keys))
        finally:
            self._fetched_at = self._clock()
            self._refreshing = None

    async def keep_fresh(self) -> None:
        """Fetch now, then every `jwks_refresh_s` (a background task of the app, cancelled at shutdown)."""
        while True:
            await self.refresh()
            await asyncio.sleep(self._config.jwks_refresh_s)
