"""Small JSON documents from the authorization server: bounded in time and size, never redirected.

What the resource server reads from its issuer (metadata, the JWKS, introspection answers) is small, so
a body beyond `MAX_BYTES` is an error, not something to buffer; a redirect is an error too, so a
compromised or misconfigured endpoint cannot point the server (and an introspection request's client
credentials) somewhere else. Plain `urllib` in a worker thread: these requests are rare (start-up, key
rotation, introspection cache misses), and the base install carries no HTTP client library.
Only https URLs are accepted, except for loopback hosts (a local test or sidecar issuer).
"""

from __future__ import annotations

import asyncio
import functools
import json
from typing import Any, Mapping
from urllib.parse import urlencode, urlsplit

MAX_BYTES = 256 * 1024
TIMEOUT_S = 5.0
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


class FetchError(Exception):
    """The authorization server could not be read: unreachable, slow, too big, redirected or not JSON.
    `status`: the HTTP status when it answered with an error."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@functools.cache
def _opener() -> Any:
    """urllib's opener without redirects; built (and urllib.request imported, ~40 ms) on the first fetch only."""
    import urllib.request

    class NoRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
            raise FetchError(f"{req.full_url} redirected ({code}) to {newurl}; redirects are not followed")

    return urllib.request.build_opener(NoRedirects())


def check_url(url: str, what: str) -> str:
    """`url` if it may be fetched (https, or http to a loopback host); ValueError naming `what` otherwise."""
    parts = urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and (parts.hostname or "") in LOOPBACK):
        if parts.hostname:
            return url
    raise ValueError(f"{what} must be an https URL (http only to a loopback host), got {url!r}")


def _fetch(url: str, form: Mapping[str, str] | None, headers: Mapping[str, str], timeout_s: float,
           max_bytes: int) -> Any:
    import urllib.error
    import urllib.request

    data = urlencode(form).encode() if form is not None else None
    request = urllib.request.Request(url, data=data, headers={"accept": "application/json", **headers})
    try:
        with _opener().open(request, timeout=timeout_s) as response:
            body = response.read(max_bytes + 1)
    except urllib.error.HTTPError as error:
        raise FetchError(f"{url} answered {error.code}", error.code) from None
    except (OSError, ValueError) as error:  # URLError, timeouts, refused connections
        raise FetchError(f"{url} could not be read: {error}") from None
    if len(body) > max_bytes:
        raise FetchError(f"{url} sent more than {max_bytes} bytes")
    try:
        return json.loads(body)
    except ValueError:
        raise FetchError(f"{url} did not send JSON") from None


async def fetch_json(url: str, *, form: Mapping[str, str] | None = None, headers: Mapping[str, str] | None = None,
                     timeout_s: float = TIMEOUT_S, max_bytes: int = MAX_BYTES) -> Any:
    """GET `url` (POST `form` when given) and decode its JSON, in a worker thread; FetchError on failure."""
    return await asyncio.to_thread(_fetch, url, form, headers or {}, timeout_s, max_bytes)
