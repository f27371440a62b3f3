"""The authorization server's metadata (RFC 8414, or OpenID Connect Discovery): where its keys and its
introspection endpoint are, when the operator did not say."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .fetch import FetchError, check_url, fetch_json


def metadata_urls(issuer: str) -> list[str]:
    """Where the metadata may be, in the order MCP clients try them (RFC 8414 §3.1 path insertion first)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    at = lambda p: urlunsplit((parts.scheme, parts.netloc, p, "", ""))  # noqa: E731
    urls = [at(f"/.well-known/oauth-authorization-server{path}"), at(f"/.well-known/openid-configuration{path}")]
    if path:
        urls.append(at(f"{path}/.well-known/openid-configuration"))
    return urls


async def issuer_metadata(issuer: str, *, timeout_s: float) -> dict[str, Any]:
    """The first metadata document found that names `issuer` as its issuer; FetchError if none does."""
    problems = []
    for url in metadata_urls(issuer):
        try:
            document = await fetch_json(url, timeout_s=timeout_s)
        except FetchError as error:
            problems.append(str(error))
            continue
        if not isinstance(document, dict):
            problems.append(f"{url} is not a JSON object")
            continue
        if str(document.get("issuer", "")).rstrip("/") != issuer:
            # RFC 8414 §3.3: metadata naming another issuer must not be used (a mix-up attack).
            problems.append(f"{url} names issuer {document.get('issuer')!r}, not {issuer!r}")
            continue
        return document
    raise FetchError("no usable metadata for issuer " + issuer + ": " + "; ".join(problems))


async def endpoint(issuer: str, key: str, *, timeout_s: float) -> str:
    """One endpoint URL from the issuer's metadata (`jwks_uri`, `introspection_endpoint`)."""
    document = await issuer_metadata(issuer, timeout_s=timeout_s)
    url = document.get(key)
    if not isinstance(url, str):
        raise FetchError(f"the metadata of {issuer} has no {key}")
    try:
        return check_url(url, key)
    except ValueError as error:
        raise FetchError(str(error)) from None
